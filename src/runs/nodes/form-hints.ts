/**
 * What the console's form for a node kind needs beyond its settings message: the form itself is
 * built from the message's descriptor (fields, their comments as help, enums, lists, groups). Field
 * paths are proto field names from the settings message, through nested messages and lists
 * ("routes.when": the `when` of every route).
 */
export interface FormHints {
  readonly label: string;
  /** One line on what the kind does. */
  readonly summary: string;
  /** Fields holding a JSONata expression over the run data: edited in the expression editor. */
  readonly expressions?: readonly string[];
  /** Fields holding node ids of the same pipeline: chosen among them. */
  readonly nodeRefs?: readonly string[];
  /** Repeated text fields whose values come from a fixed list: ticked among them. */
  readonly choices?: Readonly<Record<string, readonly string[]>>;
  /** Text fields edited over several lines (a JSON Schema). */
  readonly multiline?: readonly string[];
}
