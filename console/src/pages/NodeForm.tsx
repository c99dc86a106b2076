import { create, type DescMessage } from "@bufbuild/protobuf";
import { lazy, type ReactNode, Suspense, useId, useMemo } from "react";
import { Field } from "../components.tsx";
import { type FieldSpec, kindForm, refusalHome, type ValueSpec } from "../node-form.ts";
import type { NodeKind } from "../pipeline-graph.ts";

/** CodeMirror and JSONata load when an expression field is first shown, not with the canvas. */
const ExpressionEditor = lazy(() => import("../expressions/ExpressionEditor.tsx"));

type Message = Record<string, unknown>;

/** What the form's fields need from the pipeline around the node. */
interface FormContext {
  /** The ids of the pipeline's other nodes, for fields that name one. */
  nodeIds: string[];
  /** Run-data paths the expression editor completes. */
  paths: readonly string[];
  /** Run data expressions are evaluated against as they are typed. */
  data: unknown;
  readOnly: boolean;
  /** The service's refusal inside these settings: the control it is shown on, and its message. */
  refusal: { home: string; message: string } | undefined;
}

interface Props {
  kind: NodeKind;
  settings: Message;
  onChange: (settings: Message) => void;
  context: Omit<FormContext, "refusal">;
  /** A refusal's path inside the settings ("routes[0].when"), shown on that field or the nearest one drawn. */
  refusal: { path: string; message: string } | undefined;
}

/** A node's settings as a form generated from its kind's settings message (see node-form.ts). */
export function NodeForm({ kind, settings, onChange, context, refusal }: Props) {
  const form = useMemo(() => kindForm(kind), [kind]);
  const home = refusal === undefined ? undefined : refusalHome(form.fields, settings, refusal.path);
  const full: FormContext = { ...context, refusal: refusal === undefined || home === undefined ? undefined : { home, message: refusal.message } };
  return (
    <div className="node-form">
      <p className="muted">{form.summary}</p>
      {home === "" && (
        <p className="field-error" role="alert">
          {refusal?.message}
        </p>
      )}
      {form.fields.length === 0 && <p className="muted">This kind has no settings.</p>}
      <Fields fields={form.fields} value={settings} onChange={onChange} path="" context={full} />
    </div>
  );
}

function Fields(props: { fields: FieldSpec[]; value: Message; onChange: (value: Message) => void; path: string; context: FormContext }) {
  const { fields, value, onChange, path, context } = props;
  return (
    <>
      {fields.map((spec) => (
        <FieldControl
          key={spec.name}
          spec={spec}
          message={value}
          onChange={onChange}
          path={path === "" ? spec.name : `${path}.${spec.name}`}
          context={context}
        />
      ))}
    </>
  );
}

const errorAt = (context: FormContext, path: string) => (context.refusal?.home === path ? context.refusal.message : undefined);

/** One field of a message: its value set on a copy of the message. */
function FieldControl(props: { spec: FieldSpec; message: Message; onChange: (message: Message) => void; path: string; context: FormContext }) {
  const { spec, message, onChange, path, context } = props;
  const set = (value: unknown) => onChange({ ...message, [spec.localName]: value });
  const own = message[spec.localName];
  const error = errorAt(context, path);
  switch (spec.shape) {
    case "single":
      return <ValueControl spec={spec.value} label={spec.label} help={spec.help} value={own} onChange={set} path={path} context={context} error={error} />;
    case "choices":
      return <Choices label={spec.label} help={spec.help} choices={spec.choices} value={own as string[]} onChange={set} error={error} />;
    case "list":
      return <ListControl spec={spec} value={own as unknown[]} onChange={set} path={path} context={context} error={error} />;
    case "map":
      return <MapControl spec={spec} value={own as Record<string, unknown>} onChange={set} path={path} context={context} error={error} />;
    case "oneof":
      return <OneofControl spec={spec} value={own as { case: string | undefined; value?: unknown }} onChange={set} path={path} context={context} />;
  }
}

/** A value a control starts with when added to a list or a map. */
function emptyValue(spec: ValueSpec): unknown {
  switch (spec.control) {
    case "group":
      return create(spec.message as DescMessage);
    case "number":
    case "select":
      return 0;
    case "checkbox":
      return false;
    default:
      return "";
  }
}

function ValueControl(props: {
  spec: ValueSpec;
  label: string;
  help: string | undefined;
  value: unknown;
  onChange: (value: unknown) => void;
  path: string;
  context: FormContext;
  error: string | undefined;
}) {
  const { spec, label, help, value, onChange, path, context, error } = props;
  switch (spec.control) {
    case "group":
      return (
        <fieldset className="group">
          <legend>{label}</legend>
          {help && <small className="help">{help}</small>}
          {error && <small className="field-error">{error}</small>}
          <Fields
            fields={spec.fields}
            value={(value as Message | undefined) ?? (create(spec.message) as Message)}
            onChange={onChange}
            path={path}
            context={context}
          />
        </fieldset>
      );
    case "checkbox":
      return (
        <div className="field">
          <label className="inline">
            <input type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} aria-invalid={error ? true : undefined} />
            {label}
          </label>
          {help && <small>{help}</small>}
          {error && <small className="field-error">{error}</small>}
        </div>
      );
    case "expression":
      return <ExpressionField label={label} help={help} value={value as string} onChange={onChange} context={context} error={error} />;
    default:
      return (
        <Field label={label} hint={help} error={error}>
          {(control) => <Input spec={spec} control={control} value={value} onChange={onChange} context={context} />}
        </Field>
      );
  }
}

/** The control of one plain value: text, number, an enum's choice, a node id. */
function Input(props: { spec: ValueSpec; control: { id: string }; value: unknown; onChange: (value: unknown) => void; context: FormContext }): ReactNode {
  const { spec, control, value, onChange, context } = props;
  switch (spec.control) {
    case "number":
      return (
        <input
          {...control}
          type="number"
          step={spec.decimal ? "any" : 1}
          value={value === undefined ? "" : String(value)}
          onChange={(event) => onChange(event.target.value === "" ? (spec.optional ? undefined : 0) : Number(event.target.value))}
        />
      );
    case "select":
      return (
        <select {...control} value={String(value)} onChange={(event) => onChange(Number(event.target.value))}>
          {spec.options.map((option) => (
            <option key={option.value} value={option.value} title={option.help}>
              {option.label}
            </option>
          ))}
        </select>
      );
    case "node":
      return (
        <select {...control} value={value as string} onChange={(event) => onChange(event.target.value)}>
          <option value="">None</option>
          {[...new Set([...context.nodeIds, value as string])]
            .filter((id) => id !== "")
            .map((id) => (
              <option key={id} value={id}>
                {id}
              </option>
            ))}
        </select>
      );
    case "multiline":
      return <textarea {...control} className="code" rows={6} spellCheck={false} value={value as string} onChange={(event) => onChange(event.target.value)} />;
    default:
      return <input {...control} value={value as string} onChange={(event) => onChange(event.target.value)} />;
  }
}

function ExpressionField(props: {
  label: string;
  help: string | undefined;
  value: string;
  onChange: (value: string) => void;
  context: FormContext;
  error: string | undefined;
}) {
  const label = `${props.label} (JSONata)`;
  const description = [props.error, props.help].filter((part) => part !== undefined).join(" ");
  return (
    <div className="field">
      <span className="label" aria-hidden="true">
        {props.label} <small className="muted">(JSONata)</small>
      </span>
      <Suspense fallback={<p className="loading">Loading the expression editor…</p>}>
        <ExpressionEditor
          value={props.value}
          onChange={props.onChange}
          label={label}
          description={description === "" ? undefined : description}
          invalid={props.error !== undefined}
          readOnly={props.context.readOnly}
          paths={props.context.paths}
          data={props.context.data}
        />
      </Suspense>
      {props.help && <small>{props.help}</small>}
      {props.error && <small className="field-error">{props.error}</small>}
    </div>
  );
}

/** A repeated text field ticked among fixed values, kept in the values' order. */
function Choices(props: {
  label: string;
  help: string | undefined;
  choices: readonly string[];
  value: string[];
  onChange: (value: string[]) => void;
  error: string | undefined;
}) {
  const { label, help, choices, value, onChange, error } = props;
  const id = useId();
  return (
    <fieldset className="checkboxes" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{label}</legend>
      {choices.map((choice) => (
        <label key={choice}>
          <input
            type="checkbox"
            checked={value.includes(choice)}
            onChange={(event) => onChange(choices.filter((known) => (known === choice ? event.target.checked : value.includes(known))))}
          />
          {choice}
        </label>
      ))}
      {help && <small className="help">{help}</small>}
      {error && (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      )}
    </fieldset>
  );
}

/** A repeated field: its items each with a Remove button, and an Add button. */
function ListControl(props: {
  spec: FieldSpec & { shape: "list" };
  value: unknown[];
  onChange: (value: unknown[]) => void;
  path: string;
  context: FormContext;
  error: string | undefined;
}) {
  const { spec, value, onChange, path, context, error } = props;
  const item = itemLabel(spec).toLowerCase();
  return (
    <fieldset className="list">
      <legend>{spec.label}</legend>
      {spec.help && <small className="help">{spec.help}</small>}
      {error && <small className="field-error">{error}</small>}
      {value.map((entry, index) => (
        // Items have no identity of their own but their place.
        // biome-ignore lint/suspicious/noArrayIndexKey: an item is its index in the list.
        <div className="list-item" key={index}>
          <ValueControl
            spec={spec.value}
            label={`${itemLabel(spec)} ${index + 1}`}
            help={undefined}
            value={entry}
            onChange={(changed) => onChange(value.map((old, at) => (at === index ? changed : old)))}
            path={`${path}[${index}]`}
            context={context}
            error={errorAt(context, `${path}[${index}]`)}
          />
          <button type="button" className="small" aria-label={`Remove ${item} ${index + 1}`} onClick={() => onChange(value.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="small" onClick={() => onChange([...value, emptyValue(spec.value)])}>
        Add {item}
      </button>
    </fieldset>
  );
}

/** "Fields" -> "Field", "Classes" -> "Class", "Allowed origins" -> "Allowed origin": an item's name. */
const itemLabel = (spec: FieldSpec) => spec.label.replace(/(e?s)$/, (ending) => (ending === "es" && !spec.label.endsWith("ses") ? "e" : ""));

/** A map field: its entries as key and value rows, in the order they were added. */
function MapControl(props: {
  spec: FieldSpec & { shape: "map" };
  value: Record<string, unknown>;
  onChange: (value: Record<string, unknown>) => void;
  path: string;
  context: FormContext;
  error: string | undefined;
}) {
  const { spec, value, onChange, path, context, error } = props;
  const entries = Object.entries(value);
  const replace = (index: number, key: string, entry: unknown) => onChange(Object.fromEntries(entries.map((old, at) => (at === index ? [key, entry] : old))));
  return (
    <fieldset className="list">
      <legend>{spec.label}</legend>
      {spec.help && <small className="help">{spec.help}</small>}
      {error && <small className="field-error">{error}</small>}
      {entries.map(([key, entry], index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a key being typed changes; its row stays.
        <div className="list-item map-entry" key={index}>
          <Field label={`Name ${index + 1}`}>
            {(control) => <input {...control} value={key} onChange={(event) => replace(index, event.target.value, entry)} />}
          </Field>
          <ValueControl
            spec={spec.value}
            label={`Value ${index + 1}`}
            help={undefined}
            value={entry}
            onChange={(changed) => replace(index, key, changed)}
            path={`${path}.${key}`}
            context={context}
            error={undefined}
          />
          <button
            type="button"
            className="small"
            aria-label={`Remove ${key || `entry ${index + 1}`}`}
            onClick={() => onChange(Object.fromEntries(entries.filter((_, at) => at !== index)))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" className="small" disabled={"" in value} onClick={() => onChange({ ...value, "": emptyValue(spec.value) })}>
        Add {itemLabel(spec).toLowerCase()}
      </button>
    </fieldset>
  );
}

/** A oneof: which of its fields is set, then that field's control. */
function OneofControl(props: {
  spec: FieldSpec & { shape: "oneof" };
  value: { case: string | undefined; value?: unknown };
  onChange: (value: { case: string | undefined; value?: unknown }) => void;
  path: string;
  context: FormContext;
}) {
  const { spec, value, onChange, context } = props;
  const chosen = spec.cases.find((each) => each.localName === value.case);
  const startValue = (each: FieldSpec) => (each.shape === "single" ? emptyValue(each.value) : undefined);
  return (
    <fieldset className="group">
      <legend>{spec.label}</legend>
      {spec.help && <small className="help">{spec.help}</small>}
      <Field label={`${spec.label}: which`}>
        {(control) => (
          <select
            {...control}
            value={value.case ?? ""}
            onChange={(event) => {
              const next = spec.cases.find((each) => each.localName === event.target.value);
              onChange(next === undefined ? { case: undefined } : { case: next.localName, value: startValue(next) });
            }}
          >
            <option value="">None</option>
            {spec.cases.map((each) => (
              <option key={each.localName} value={each.localName}>
                {each.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {chosen !== undefined && (
        <FieldControl
          spec={chosen}
          message={{ [chosen.localName]: value.value }}
          onChange={(changed) => onChange({ case: chosen.localName, value: changed[chosen.localName] })}
          path={chosen.name}
          context={context}
        />
      )}
    </fieldset>
  );
}
