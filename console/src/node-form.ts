import { type DescEnum, type DescField, type DescMessage, type DescOneof, ScalarType } from "@bufbuild/protobuf";
import { NodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { help as PIPE_HELP } from "../../gen/docpipe/v1/pipe_help.js";
import type { FormHints } from "../../src/runs/nodes/form-hints.ts";
import { NODE_FORMS } from "../../src/runs/nodes/forms.ts";
import type { NodeKind } from "./pipeline-graph.ts";

/** A choice of an enum: its number, its name without the enum's prefix, its comment. */
interface EnumOption {
  value: number;
  label: string;
  help: string | undefined;
}

interface BaseSpec {
  /** The proto field name ("max_size_mb"): what a refusal's field path names. */
  name: string;
  /** The field's property in the message ("maxSizeMb"). */
  localName: string;
  label: string;
  /** The field's comment in pipe.proto. */
  help: string | undefined;
}

/** How one value is edited. */
export type ValueSpec =
  | { control: "text" | "multiline" | "expression" | "node" }
  /** A whole number, or (`decimal`) any number; `optional` leaves it unset when blank (the service's default). */
  | { control: "number"; decimal: boolean; optional: boolean }
  | { control: "checkbox" }
  | { control: "select"; options: EnumOption[] }
  | { control: "group"; message: DescMessage; fields: FieldSpec[] };

/** A field of a settings message and how it is edited: one value, a list of them, or a map. */
export type FieldSpec =
  | (BaseSpec & { shape: "single"; value: ValueSpec })
  | (BaseSpec & { shape: "list"; value: ValueSpec })
  /** A repeated text field ticked among fixed values (accepted formats). */
  | (BaseSpec & { shape: "choices"; choices: readonly string[] })
  | (BaseSpec & { shape: "map"; value: ValueSpec })
  /** A oneof: one of its fields is set. */
  | (BaseSpec & { shape: "oneof"; cases: FieldSpec[] });

/** The form of one node kind: its name and summary from the registry, its fields from its settings message. */
export interface KindForm {
  kind: NodeKind;
  label: string;
  summary: string;
  message: DescMessage;
  fields: FieldSpec[];
}

const WORDS: Record<string, string> = { url: "URL", http: "HTTP", mb: "(MB)", json: "JSON", ocr: "OCR" };

/** "max_size_mb" -> "Max size (MB)", "at_text" -> "At text". */
function fieldLabel(name: string): string {
  const words = name.split("_").map((word) => WORDS[word] ?? word);
  const first = words[0] ?? "";
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(" ");
}

/** The enum's values by name without its prefix ("OCR_MODE_AUTO" -> "Auto"); the zero value is "Default" (its comment says which). */
function enumOptions(desc: DescEnum): EnumOption[] {
  return desc.values.map((value) => {
    const bare = value.name.slice(desc.sharedPrefix?.length ?? 0);
    // HTTP methods keep their capitals ("POST"); other names read as words ("By title").
    const word = desc.name.endsWith("Method") ? bare : bare.charAt(0) + bare.slice(1).toLowerCase().replaceAll("_", " ");
    const label = value.number === 0 ? "Default" : word;
    return { value: value.number, label, help: PIPE_HELP[`${desc.typeName}.${value.name}`] };
  });
}

/** Where a field sits among the hints' paths: "routes.when" for Route.when inside RouteNode.routes. */
const hinted = (list: readonly string[] | undefined, path: string) => list?.includes(path) ?? false;

function scalarSpec(scalar: ScalarType, path: string, hints: FormHints, optional: boolean): ValueSpec {
  switch (scalar) {
    case ScalarType.BOOL:
      return { control: "checkbox" };
    case ScalarType.STRING:
      if (hinted(hints.expressions, path)) return { control: "expression" };
      if (hinted(hints.nodeRefs, path)) return { control: "node" };
      return { control: hinted(hints.multiline, path) ? "multiline" : "text" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { control: "number", decimal: true, optional };
    default:
      return { control: "number", decimal: false, optional };
  }
}

function messageSpec(message: DescMessage, path: string, hints: FormHints): ValueSpec {
  return { control: "group", message, fields: fieldsOf(message, path, hints) };
}

function fieldSpec(field: DescField, parent: string, hints: FormHints): FieldSpec {
  const path = parent === "" ? field.name : `${parent}.${field.name}`;
  const base: BaseSpec = {
    name: field.name,
    localName: field.localName,
    label: fieldLabel(field.name),
    help: PIPE_HELP[`${field.parent.typeName}.${field.name}`],
  };
  switch (field.fieldKind) {
    case "scalar":
      return { ...base, shape: "single", value: scalarSpec(field.scalar, path, hints, field.proto.proto3Optional) };
    case "enum":
      return { ...base, shape: "single", value: { control: "select", options: enumOptions(field.enum) } };
    case "message":
      return { ...base, shape: "single", value: messageSpec(field.message, path, hints) };
    case "list": {
      const choices = hints.choices?.[path];
      if (choices !== undefined) return { ...base, shape: "choices", choices };
      if (field.listKind === "scalar") return { ...base, shape: "list", value: scalarSpec(field.scalar, path, hints, false) };
      if (field.listKind === "enum") return { ...base, shape: "list", value: { control: "select", options: enumOptions(field.enum) } };
      return { ...base, shape: "list", value: messageSpec(field.message, path, hints) };
    }
    case "map":
      if (field.mapKind === "enum") return { ...base, shape: "map", value: { control: "select", options: enumOptions(field.enum) } };
      if (field.mapKind === "message") return { ...base, shape: "map", value: messageSpec(field.message, path, hints) };
      return { ...base, shape: "map", value: scalarSpec(field.scalar, path, hints, false) };
  }
}

function oneofSpec(oneof: DescOneof, parent: string, hints: FormHints): FieldSpec {
  return {
    name: oneof.name,
    localName: oneof.localName,
    label: fieldLabel(oneof.name),
    help: PIPE_HELP[`${oneof.parent.typeName}.${oneof.name}`],
    shape: "oneof",
    cases: oneof.fields.map((field) => fieldSpec(field, parent, hints)),
  };
}

/** A message's fields in declaration order, a oneof once where its first field is. */
export function fieldsOf(message: DescMessage, parent: string, hints: FormHints): FieldSpec[] {
  const specs: FieldSpec[] = [];
  for (const member of message.members) {
    specs.push(member.kind === "oneof" ? oneofSpec(member, parent, hints) : fieldSpec(member, parent, hints));
  }
  return specs;
}

/** The case field of the Node message's `kind` oneof for a kind: its settings message and its proto name. */
function kindField(kind: NodeKind): DescField & { fieldKind: "message" } {
  const field = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")!.fields.find((candidate) => candidate.localName === kind);
  if (field?.fieldKind !== "message") throw new Error(`node kind ${kind} has no settings message`);
  return field;
}

/** The form of a node kind, from its settings message's descriptor and the registry's hints. */
export function kindForm(kind: NodeKind): KindForm {
  const hints: FormHints = NODE_FORMS[kind];
  const message = kindField(kind).message;
  return { kind, label: hints.label, summary: hints.summary, message, fields: fieldsOf(message, "", hints) };
}

/**
 * Where in a node's form a service refusal belongs. The service names the field in the pipeline it
 * was sent ("pipeline.nodes[3].route.routes[0].when"); this gives the node's index and the path
 * inside its settings ("routes[0].when"), "" for the settings as a whole, or `node` for the
 * node's own fields ("id", "next[0]", or the node itself).
 */
export function refusalPath(field: string | undefined, kind: NodeKind | undefined): { index: number; path: string; node: boolean } | undefined {
  const match = field === undefined ? null : /^pipeline\.nodes\[(\d+)\](?:\.(.*))?$/.exec(field);
  if (match === null) return undefined;
  const index = Number(match[1]);
  const rest = match[2] ?? "";
  const settings = kind === undefined ? undefined : kindField(kind).name;
  if (settings !== undefined && (rest === settings || rest.startsWith(`${settings}.`) || rest.startsWith(`${settings}[`))) {
    return { index, path: rest.slice(settings.length).replace(/^\./, ""), node: false };
  }
  return { index, path: rest, node: true };
}

/**
 * The path of the control a refusal is shown on: the refusal's own path when the form draws a
 * control for it, else its nearest ancestor that the form draws ("routes[7].when" with two routes
 * -> "routes"), "" (the form's top) when none. `value` is the settings message as edited.
 */
export function refusalHome(fields: FieldSpec[], value: unknown, path: string): string {
  const segments = path.match(/[A-Za-z0-9_]+|\[\d+\]/g) ?? [];
  let home = "";
  let current = "";
  let specs: FieldSpec[] | undefined = fields;
  let item: unknown = value;
  for (let position = 0; position < segments.length && specs !== undefined; position++) {
    const name = segments[position]!;
    const spec: FieldSpec | undefined = specs
      .flatMap((candidate) => (candidate.shape === "oneof" ? candidate.cases : [candidate]))
      .find((candidate) => candidate.name === name);
    if (spec === undefined) break;
    current = current === "" ? name : `${current}.${name}`;
    home = current;
    const own = (item as Record<string, unknown> | undefined)?.[spec.localName];
    specs = undefined;
    if (spec.shape === "single" && spec.value.control === "group") {
      specs = spec.value.fields;
      item = own;
    } else if (spec.shape === "list") {
      const index = /^\[(\d+)\]$/.exec(segments[position + 1] ?? "");
      const list = own as unknown[] | undefined;
      if (index === null || list === undefined || Number(index[1]) >= list.length) break;
      position++;
      current = `${current}[${index[1]}]`;
      home = current;
      if (spec.value.control === "group") {
        specs = spec.value.fields;
        item = list[Number(index[1])];
      }
    }
  }
  return home;
}
