import { create, equals, fromJsonString, type MessageInitShape, toJsonString } from "@bufbuild/protobuf";
import { CallbackMethod, type NodeSchema, OcrMode, type Pipeline, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/** Every format a trigger can accept, in the order the service documents them (the service's own list). */
export { FORMAT_IDS as FORMATS } from "../../src/documents/formats/format-ids.ts";

/**
 * A pipeline as the editor holds it: one trigger, an optional parse node, an optional callback,
 * with text where the operator types (origins one per line, headers as "Name: value" lines). The
 * parse node's OCR settings are not edited here, but kept as saved.
 */
export interface PipelineForm {
  trigger: { id: string; allowedOrigins: string; acceptedFormats: string[]; maxSizeMb: string };
  parse: { enabled: boolean; id: string; ocr: OcrMode; languages: string[]; rulingLines: boolean };
  callback: { enabled: boolean; id: string; url: string; method: CallbackMethod; headers: string; retryCount: string; timeoutSeconds: string };
}

export function emptyPipelineForm(): PipelineForm {
  return {
    trigger: { id: "trigger", allowedOrigins: "", acceptedFormats: ["pdf"], maxSizeMb: "10" },
    parse: { enabled: true, id: "parse", ocr: OcrMode.UNSPECIFIED, languages: [], rulingLines: false },
    callback: { enabled: false, id: "callback", url: "", method: CallbackMethod.POST, headers: "", retryCount: "", timeoutSeconds: "" },
  };
}

const lines = (text: string) =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** "" stays unset (the service's default applies); anything else is sent as typed, for the service to judge. */
const optionalInt = (text: string) => (text.trim() === "" ? undefined : Number(text));

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines(text)) {
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon).trim();
    headers[name] = colon < 0 ? "" : line.slice(colon + 1).trim();
  }
  return headers;
}

/** The Pipeline message the form describes, nodes in order: trigger, parse, callback. */
export function toPipeline(form: PipelineForm): Pipeline {
  const { trigger, parse, callback } = form;
  const nodes: MessageInitShape<typeof NodeSchema>[] = [
    {
      id: trigger.id,
      kind: {
        case: "httpTrigger",
        value: { allowedOrigins: lines(trigger.allowedOrigins), acceptedFormats: trigger.acceptedFormats, maxSizeMb: Number(trigger.maxSizeMb) },
      },
    },
  ];
  if (parse.enabled) {
    const { ocr, languages, rulingLines } = parse;
    nodes.push({ id: parse.id, kind: { case: "parse", value: { ocr, languages, rulingLines } } });
  }
  if (callback.enabled) {
    const { url, method, headers, retryCount, timeoutSeconds } = callback;
    nodes.push({
      id: callback.id,
      kind: {
        case: "callback",
        value: { url, method, headers: parseHeaders(headers), retryCount: optionalInt(retryCount), timeoutSeconds: optionalInt(timeoutSeconds) },
      },
    });
  }
  return create(PipelineSchema, { nodes });
}

/** The form of a saved pipeline (the service guarantees the trigger comes first). */
export function fromPipeline(pipeline: Pipeline | undefined): PipelineForm {
  const form = emptyPipelineForm();
  form.parse.enabled = false;
  for (const node of pipeline?.nodes ?? []) {
    const kind = node.kind;
    if (kind.case === "httpTrigger") {
      form.trigger = {
        id: node.id,
        allowedOrigins: kind.value.allowedOrigins.join("\n"),
        acceptedFormats: [...kind.value.acceptedFormats],
        maxSizeMb: String(kind.value.maxSizeMb),
      };
    } else if (kind.case === "parse") {
      const { ocr, languages, rulingLines } = kind.value;
      form.parse = { enabled: true, id: node.id, ocr, languages: [...languages], rulingLines };
    } else if (kind.case === "callback") {
      const { url, method, headers, retryCount, timeoutSeconds } = kind.value;
      form.callback = {
        enabled: true,
        id: node.id,
        url,
        method,
        headers: Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}`)
          .join("\n"),
        retryCount: retryCount === undefined ? "" : String(retryCount),
        timeoutSeconds: timeoutSeconds === undefined ? "" : String(timeoutSeconds),
      };
    }
  }
  return form;
}

const NODE_FIELD = /^pipeline\.nodes\[(\d+)\](?:\.(?:http_trigger|parse|callback))?(?:\.([a-z_]+))?/;

/**
 * The editor field a service error is about: "pipeline.nodes[0].http_trigger.max_size_mb" ->
 * "httpTrigger.max_size_mb", "pipeline.nodes[2].id" -> "callback.id", "name" -> "name". Node
 * indexes refer to `pipeline`, the message that was sent.
 */
export function formFieldOf(serverField: string, pipeline: Pipeline): string {
  const match = NODE_FIELD.exec(serverField);
  if (match === null) return serverField;
  const kind = pipeline.nodes[Number(match[1])]?.kind.case;
  if (kind === undefined) return "pipeline";
  return match[2] === undefined ? kind : `${kind}.${match[2]}`;
}

/**
 * Whether the form shows all of `pipeline`: saving the form gives back the same pipeline. A graph
 * (next, end_branch), a node the form has no fields for (route, extract, review, …) or a second
 * callback is edited as JSON instead, so saving never drops what the form cannot show.
 */
export function formShows(pipeline: Pipeline | undefined): boolean {
  const given = pipeline ?? create(PipelineSchema);
  return equals(PipelineSchema, toPipeline(fromPipeline(given)), given);
}

/** The pipeline as the JSON the editor shows (the API's JSON form, as PipeService takes it). */
export function pipelineJson(pipeline: Pipeline | undefined): string {
  return toJsonString(PipelineSchema, pipeline ?? create(PipelineSchema), { prettySpaces: 2 });
}

/** The pipeline JSON typed in the editor; throws with what is wrong (bad JSON, an unknown field). */
export function pipelineFromJson(text: string): Pipeline {
  return fromJsonString(PipelineSchema, text);
}
