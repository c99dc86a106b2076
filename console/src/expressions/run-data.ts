import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Pipeline } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { Run, RunStep } from "../../../gen/docpipe/v1/run_pb.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Run data shaped as the pipeline's nodes would write it (docs/pipelines.md, "Run data"): `file`,
 * and each node's output under its id with the members its kind gives (an extract's fields by name,
 * a classify's classes). What an expression is tried against before a run's own data is chosen.
 */
export function sampleRunData(pipeline: Pipeline): Record<string, Json> {
  const data: Record<string, Json> = { file: { name: "invoice.pdf", format: "pdf", size: 48213, sha256: "", pageCount: 1 } };
  for (const node of pipeline.nodes) {
    const kind = node.kind;
    switch (kind.case) {
      case "parse":
        data[node.id] = {
          format: "pdf",
          pageCount: 1,
          text: "Invoice 2026-17 Total 42.00 EUR",
          pages: [{ page: 1, text: "Invoice 2026-17 Total 42.00 EUR" }],
          elements: [],
        };
        break;
      case "extract":
        data[node.id] = {
          fields: Object.fromEntries([...kind.value.fields.map((field) => [field.name, ""]), ...kind.value.tables.map((table) => [table.name, []])]),
          missing: [],
          found: {},
        };
        break;
      case "classify":
        data[node.id] = {
          class: kind.value.classes[0]?.name ?? "other",
          score: 1,
          scores: Object.fromEntries(kind.value.classes.map((each) => [each.name, 0])),
        };
        break;
      case "validate":
        data[node.id] = { valid: true, errors: [] };
        break;
      case "route":
        data[node.id] = { route: 0, to: kind.value.routes[0]?.to ?? [] };
        break;
      case "httpRequest":
        data[node.id] = { status: 200, body: {} };
        break;
      case "emailTrigger":
        data[node.id] = { email: { sender: "ap@example.com", subject: "Invoice", messageId: "" } };
        break;
      case "transform":
        data[node.id] = {};
        break;
      default:
        break;
    }
  }
  return data;
}

/** What a step produced: its object output, or its other value (a transform's text, number, list). */
export function stepOutput(step: RunStep): Json | undefined {
  if (step.output !== undefined) return step.output as Json;
  return step.outputValue === undefined ? undefined : (toJson(ValueSchema, step.outputValue) as Json);
}

/**
 * A run's data as its nodes wrote it: `file`, and each node's output under its id (the last step
 * of a node that ran more than once). What the expression editor completes and evaluates against
 * once a run is chosen.
 */
export function runDataOf(run: Run): Record<string, Json> {
  const file = run.file;
  const data: Record<string, Json> = {
    file: file === undefined ? null : { name: file.name, format: file.format, contentType: file.contentType, size: Number(file.size), sha256: file.sha256 },
  };
  for (const step of run.steps) {
    const output = stepOutput(step);
    if (output !== undefined) data[step.nodeId] = output;
  }
  return data;
}

/**
 * Every path into `data` an expression can name ("extract.fields.total"), to the given depth. An
 * array's members are named through it, as JSONata maps a path over an array ("read.pages.text").
 */
export function runDataPaths(data: unknown, depth = 4): string[] {
  const paths = new Set<string>();
  const walk = (value: unknown, prefix: string, left: number) => {
    if (left === 0 || value === null || typeof value !== "object") return;
    const members = Array.isArray(value) ? value.filter((item) => typeof item === "object" && item !== null) : [value];
    for (const member of members.slice(0, 20)) {
      for (const [key, inner] of Object.entries(member as Record<string, unknown>)) {
        const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `\`${key}\``;
        const path = prefix === "" ? name : `${prefix}.${name}`;
        paths.add(path);
        walk(inner, path, left - 1);
      }
    }
  };
  walk(data, "", depth);
  return [...paths];
}
