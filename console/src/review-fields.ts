import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { type ExtractNode, FieldType, type Pipeline } from "../../gen/docpipe/v1/pipe_pb.js";

/** `[x0, y0, x1, y1]` from the page's top-left corner: PDF points for a PDF, pixels for a picture (the parse's `bbox`). */
export type Box = [number, number, number, number];

/** Where an extract step read a value (its `found` entry; see docs/nodes.md#extract). */
interface FoundAt {
  page: number;
  text: string;
  by: string;
  label?: string;
  box?: Box;
}

/** The types a reviewer sees, as the extract node names them. */
type ReviewFieldType = "text" | "number" | "date" | "money" | "yes/no" | "table";

/** One value of an extract step, as the reviewer checks it. */
export interface ReviewField {
  /** The extract node's id. */
  node: string;
  name: string;
  type: ReviewFieldType;
  /** Undefined when the pipe's settings cannot be read (a reviewer may read runs, not pipes). */
  required: boolean | undefined;
  missing: boolean;
  value: JsonValue | undefined;
  found: FoundAt | undefined;
}

const TYPES: Record<FieldType, ReviewFieldType> = {
  [FieldType.UNSPECIFIED]: "text",
  [FieldType.STRING]: "text",
  [FieldType.NUMBER]: "number",
  [FieldType.DATE]: "date",
  [FieldType.MONEY]: "money",
  [FieldType.BOOLEAN]: "yes/no",
};

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Whether a node's output has an extract's shape: its values by field name in `fields`. */
export function isExtractOutput(output: JsonValue | undefined): output is JsonObject & { fields: JsonObject } {
  return isObject(output) && isObject(output.fields);
}

/** A value's type read from the value itself, for when the node's settings are not readable. */
function typeOfValue(value: JsonValue | undefined): ReviewFieldType {
  if (Array.isArray(value)) return "table";
  if (isObject(value) && "amount" in value) return "money";
  if (typeof value === "number") return "number";
  if (typeof value === "boolean") return "yes/no";
  if (typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) return "date";
  return "text";
}

/** The extract nodes of a pipeline, by id. */
export function extractNodesOf(pipeline: Pipeline | undefined): Map<string, ExtractNode> {
  const nodes = new Map<string, ExtractNode>();
  for (const node of pipeline?.nodes ?? []) if (node.kind.case === "extract") nodes.set(node.id, node.kind.value);
  return nodes;
}

/** Those that need the reviewer most come first: required and missing, then missing, then required, then the rest. */
function rank(field: ReviewField): number {
  if (field.missing) return field.required === true ? 0 : 1;
  return field.required === true ? 2 : 3;
}

/**
 * The fields and tables of extract node `node`, by name and type from its settings (or, without
 * them, from its output's values), each with its value and where it was read, in the order a
 * reviewer takes them: required and missing first, then the node's own order.
 */
export function reviewFields(node: string, output: JsonObject & { fields: JsonObject }, settings: ExtractNode | undefined): ReviewField[] {
  const missing = new Set(Array.isArray(output.missing) ? output.missing.filter((name) => typeof name === "string") : []);
  const found = isObject(output.found) ? output.found : {};
  const field = (name: string, type: ReviewFieldType, required: boolean | undefined): ReviewField => ({
    node,
    name,
    type,
    required,
    missing: missing.has(name),
    value: output.fields[name],
    found: isObject(found[name]) ? (found[name] as unknown as FoundAt) : undefined,
  });
  const fields =
    settings === undefined
      ? [...new Set([...Object.keys(output.fields), ...missing])].map((name) => field(name, typeOfValue(output.fields[name]), undefined))
      : [
          ...settings.fields.map((setting) => field(setting.name, TYPES[setting.type] ?? "text", setting.required)),
          ...settings.tables.map((setting) => field(setting.name, "table", setting.required)),
        ];
  return fields
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => rank(a.entry) - rank(b.entry) || a.index - b.index)
    .map(({ entry }) => entry);
}

/** A value as the reviewer reads and edits it: money as `1334.56 EUR`, yes/no as `yes` or `no`. */
export function valueText(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (isObject(value) && "amount" in value)
    return [value.amount, value.currency].filter((part) => part !== undefined && part !== null && part !== "").join(" ");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * The data with the reviewer's edits of extract fields, each by node and name: a typed text in
 * `fields` (the service gives it the field's type: `yes` is true for a yes/no field); a field the
 * step missed leaves `missing` when given a value (and a blank one is no value for it).
 */
export function withEdits(data: JsonObject, edits: ReadonlyMap<string, FieldEdit>): JsonObject {
  const result: JsonObject = { ...data };
  for (const { node, name, value } of edits.values()) {
    const output = result[node];
    // The run may have moved on meanwhile (decided elsewhere): its data has no such step then.
    if (!isExtractOutput(output)) continue;
    const missing = Array.isArray(output.missing) ? output.missing : [];
    const wasMissing = missing.includes(name);
    const { [name]: _old, ...fields } = output.fields;
    const filled = wasMissing && value === "" ? fields : { ...fields, [name]: value };
    result[node] = { ...output, fields: filled, ...(wasMissing && value !== "" ? { missing: missing.filter((other) => other !== name) } : {}) };
  }
  return result;
}

/** What the reviewer typed for one field. */
export interface FieldEdit {
  node: string;
  name: string;
  value: string;
}

/** The key of a field among the edits. */
export function editKey(node: string, name: string): string {
  return JSON.stringify([node, name]);
}
