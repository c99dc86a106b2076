import { clone, toJson } from "@bufbuild/protobuf";
import {
  type CallbackNode,
  CallbackMethodSchema,
  type ChunkNode,
  ChunkStrategySchema,
  type EmailTrigger,
  HttpMethodSchema,
  type HttpRequestNode,
  type HttpTrigger,
  type Node,
  OcrModeSchema,
  type ParseNode,
  type Pipeline,
  PipelineSchema,
  ReviewDecisionSchema,
  type ReviewNode,
  type RouteNode,
  type SplitNode,
} from "../../gen/docpipe/v1/pipe_pb.js";
import { DEFAULT_MAX_CHARACTERS, MAX_MAX_CHARACTERS } from "../chunk/chunk-step.ts";
import { checkCallbackUrl } from "../callbacks/address-guard.ts";
import { isStorableText } from "../db/storable.ts";
import { FORMAT_IDS, isFormatId } from "../formats/format-ids.ts";
import { checkDataNode } from "../nodes/check-settings.ts";
import type { NodeKind } from "../nodes/definition.ts";
import { kindName, NODE_KINDS, nodeDefinition } from "../nodes/registry.ts";
import { compileSchema } from "../nodes/validate/validate.ts";
import { StepError } from "../nodes/step-error.ts";
import { isOcrLanguage, OCR_LANGUAGES } from "../parse/ocr-languages.ts";
import { MAX_AT_TEXT_LENGTH, parseRanges } from "../split/split-plan.ts";
import { compileExpression, ExpressionError } from "./expressions.ts";
import { ancestorsOf, edgesOf, findCycle, pipelineGraph, reachable } from "./graph.ts";

/** Operator limits a pipeline is checked against; they may change, so a saved pipeline is rechecked on activation. */
export interface PipelineLimits {
  maxSizeMbLimit: number;
  /** Whether callbacks may target loopback, private and link-local addresses (CALLBACK_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateCallbacks: boolean;
}

/** A pipeline is a short chain of steps; the bound keeps validation and execution cheap whatever is sent. */
export const MAX_PIPELINE_NODES = 50;
const MAX_ALLOWED_ORIGINS = 100;
const MAX_CALLBACK_HEADERS = 50;
const MAX_HEADER_VALUE_LENGTH = 8192;
const NODE_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** The run data's member that describes the document: no node may be given its name. */
const RUN_DATA_FILE = "file";
const MAX_RETRY_COUNT = 10;
const MAX_MESSAGES_PER_HOUR = 100_000;
const MIN_TIMEOUT_SECONDS = 1;
const MAX_TIMEOUT_SECONDS = 300;
const MAX_ROUTES = 50;
/** A review waits at most a year for its decision. */
const MAX_REVIEW_TIMEOUT_HOURS = 24 * 366;
/** RFC 9110 token: what an HTTP header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * What Node refuses in a header value (it sends tab, 0x20-0x7E and 0x80-0xFF only): control
 * characters (CR, LF, NUL among them would let a value split the request) and anything past U+00FF
 * (`€`, a zero-width space). Saved, such a value failed every attempt: a callback's retries for a
 * day, an HTTP request node's at each run.
 */
const HEADER_VALUE_FORBIDDEN = /[^\t\u0020-\u007e\u0080-\u00ff]/;
/** A DNS name (IDNs in their xn-- form), an IPv4 address or a bracketed IPv6 address; URL parsing alone lets "*.example.com" through. */
const ORIGIN_HOST = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])$/;

/**
 * Why a pipeline was refused: `invalid_pipeline` (it cannot be saved) or `pipeline_not_runnable` (it
 * is saved but cannot accept submissions), with the field of the problem. Services turn it into
 * their own errors.
 */
export class PipelineError extends Error {
  override name = "PipelineError";
  readonly reason: "invalid_pipeline" | "pipeline_not_runnable";
  readonly field: string;

  constructor(reason: PipelineError["reason"], field: string, message: string) {
    super(message);
    this.reason = reason;
    this.field = field;
  }
}

function invalidPipeline(field: string, message: string): PipelineError {
  return new PipelineError("invalid_pipeline", field, `${field}: ${message}`);
}

/**
 * The path (proto field names) of the first text in `value`, a key or a string, that the database
 * cannot hold: a NUL or half a surrogate pair; undefined when there is none.
 */
function unstorableTextAt(value: unknown, path: string): string | undefined {
  if (typeof value === "string") return isStorableText(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const at = unstorableTextAt(item, `${path}[${index}]`);
      if (at !== undefined) return at;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const at = isStorableText(key) ? unstorableTextAt(item, `${path}.${key}`) : `${path}.${key}`;
      if (at !== undefined) return at;
    }
  }
  return undefined;
}

/**
 * Checks a pipeline and returns it normalized (empty node ids assigned), without changing the input.
 * An empty pipeline is valid (a pipe being drafted); a non-empty one starts with its only trigger.
 * Throws a PipelineError, reason "invalid_pipeline", naming the first bad field. Linear in its size.
 */
export function validatePipeline(pipeline: Pipeline, limits: PipelineLimits): Pipeline {
  if (pipeline.nodes.length > MAX_PIPELINE_NODES) throw invalidPipeline("pipeline.nodes", `a pipeline has at most ${MAX_PIPELINE_NODES} nodes`);
  // Refused rather than cleaned: a pattern or an expression without its NUL means something else.
  const unstorable = unstorableTextAt(toJson(PipelineSchema, pipeline, { useProtoFieldName: true }), "pipeline");
  if (unstorable !== undefined) throw invalidPipeline(unstorable, "text may not hold a NUL character or half of a surrogate pair");
  const normalized = clone(PipelineSchema, pipeline);
  normalized.nodes.forEach((node, index) => validateNode(node, `pipeline.nodes[${index}]`, index, limits, normalized.nodes[index - 1]));
  assignNodeIds(normalized.nodes);
  validateGraph(normalized);
  return normalized;
}

/** A node's StepError (what running it would fail with) as the invalid_pipeline error naming its field. */
function settingsError(error: unknown, path: string): unknown {
  if (!(error instanceof StepError)) return error;
  const field = typeof error.details.field === "string" ? error.details.field : path;
  return new PipelineError("invalid_pipeline", field, error.message.slice(error.code.length + 2));
}

/**
 * Compiles the JSON Schemas of a valid pipeline's validate nodes, in a matching thread (see
 * compileSchema), as a pipe is saved: throws a PipelineError, reason "invalid_pipeline", naming the
 * first schema Ajv refuses. Apart from validatePipeline, which stays synchronous; a schema does not
 * depend on the operator's limits, so an activation does not compile it again.
 */
export async function compilePipelineSchemas(pipeline: Pipeline): Promise<void> {
  for (const [index, node] of pipeline.nodes.entries()) {
    if (node.kind.case !== "validate") continue;
    const path = `pipeline.nodes[${index}].${kindName("validate")}`;
    try {
      await compileSchema(node.kind.value.schema, `${path}.schema`);
    } catch (error) {
      throw settingsError(error, path);
    }
  }
}

/**
 * A pipeline that can accept submissions: non-empty and valid against today's limits.
 * Throws a PipelineError, reason "pipeline_not_runnable", with the field of the problem.
 */
export function requireRunnablePipeline(pipeline: Pipeline, limits: PipelineLimits): void {
  if (pipeline.nodes.length === 0) {
    throw new PipelineError("pipeline_not_runnable", "pipeline.nodes", "pipeline is empty: it needs an http_trigger node first");
  }
  try {
    validatePipeline(pipeline, limits);
  } catch (error) {
    if (!(error instanceof PipelineError)) throw error;
    throw new PipelineError("pipeline_not_runnable", error.field, `pipeline cannot run: ${error.message}`);
  }
}

function validateNode(node: Node, path: string, index: number, limits: PipelineLimits, previous: Node | undefined): void {
  if (node.id !== "" && !NODE_ID.test(node.id)) {
    throw invalidPipeline(`${path}.id`, "must be 1..63 lowercase letters, digits, '_' or '-', starting with a letter or digit");
  }
  // A node's output is the run data's member of its id, and `file` is the run's document there.
  if (node.id === RUN_DATA_FILE) throw invalidPipeline(`${path}.id`, `"${RUN_DATA_FILE}" is the run data's document: name the node otherwise`);
  const kind = node.kind;
  if (kind.case === undefined) throw invalidPipeline(path, `unknown node type: set one of ${NODE_KINDS.map(kindName).join(", ")}`);
  if (node.next.length > MAX_PIPELINE_NODES) throw invalidPipeline(`${path}.next`, `at most ${MAX_PIPELINE_NODES} node ids`);
  if (kind.case === "route" && node.next.length > 0)
    throw invalidPipeline(`${path}.next`, "a route node passes on through its routes and otherwise: next must be empty");
  if (node.endBranch && (kind.case === "route" || node.next.length > 0)) {
    throw invalidPipeline(`${path}.end_branch`, "ends a branch only on a node without next, and never on a route node");
  }
  if (index === 0 && nodeDefinition(kind.case).isTrigger !== true)
    throw invalidPipeline(path, "a pipeline must start with an http_trigger or email_trigger node");
  const triggerAllowed = index === 0 || (index === 1 && kind.case === "emailTrigger" && previous?.kind.case === "httpTrigger");
  if (nodeDefinition(kind.case).isTrigger === true && !triggerAllowed) {
    throw invalidPipeline(`${path}.${kindName(kind.case)}`, "triggers come first: an http_trigger, an email_trigger, or an http_trigger then an email_trigger");
  }
  switch (kind.case) {
    case "httpTrigger":
      return validateHttpTrigger(kind.value, `${path}.http_trigger`, limits);
    case "emailTrigger":
      return validateEmailTrigger(kind.value, `${path}.email_trigger`, limits);
    case "extract":
    case "classify":
    case "transform":
    case "validate":
    case "httpRequest":
    case "email":
      return validateDataNode(node, `${path}.${kindName(kind.case)}`);
    case "callback":
      return validateCallback(kind.value, `${path}.callback`, limits);
    case "parse":
      return validateParse(kind.value, `${path}.parse`);
    case "route":
      return validateRoute(kind.value, `${path}.route`);
    case "review":
      return validateReview(kind.value, `${path}.review`);
    case "chunk":
      return validateChunk(kind.value, `${path}.chunk`);
    case "split":
      return validateSplit(kind.value, `${path}.split`);
    case "merge":
      return;
  }
}

/** A page count no real document reaches; bounds pages_per_part. */
const MAX_PAGES_PER_PART = 100_000;

function validateSplit(split: SplitNode, path: string): void {
  const set = [split.pagesPerPart !== 0, split.ranges !== "", split.atText !== ""].filter(Boolean).length;
  if (set !== 1) throw invalidPipeline(path, "set exactly one of pages_per_part, ranges and at_text");
  if (split.pagesPerPart < 0 || split.pagesPerPart > MAX_PAGES_PER_PART) {
    throw invalidPipeline(`${path}.pages_per_part`, `must be from 1 to ${MAX_PAGES_PER_PART}`);
  }
  if (split.ranges !== "") {
    const ranges = parseRanges(split.ranges);
    if (typeof ranges === "string") throw invalidPipeline(`${path}.ranges`, ranges);
  }
  if (split.atText !== "" && (split.atText.trim() === "" || split.atText.length > MAX_AT_TEXT_LENGTH)) {
    throw invalidPipeline(`${path}.at_text`, `must be 1 to ${MAX_AT_TEXT_LENGTH} characters, not only spaces`);
  }
}

/** Refuses an expression JSONata cannot compile, naming the field and the position. */
function validateExpression(text: string, path: string): void {
  try {
    compileExpression(text);
  } catch (error) {
    if (!(error instanceof ExpressionError)) throw error;
    throw invalidPipeline(path, `JSONata error at position ${error.position}: ${error.message}`);
  }
}

function validateRoute(route: RouteNode, path: string): void {
  if (route.routes.length === 0) throw invalidPipeline(`${path}.routes`, "a route node needs at least one route");
  if (route.routes.length > MAX_ROUTES) throw invalidPipeline(`${path}.routes`, `at most ${MAX_ROUTES} routes`);
  route.routes.forEach((each, index) => {
    if (each.when.trim() === "") throw invalidPipeline(`${path}.routes[${index}].when`, "a route needs a condition (JSONata)");
    validateExpression(each.when, `${path}.routes[${index}].when`);
    if (each.to.length > MAX_PIPELINE_NODES) throw invalidPipeline(`${path}.routes[${index}].to`, `at most ${MAX_PIPELINE_NODES} node ids`);
  });
  if (route.otherwise.length > MAX_PIPELINE_NODES) throw invalidPipeline(`${path}.otherwise`, `at most ${MAX_PIPELINE_NODES} node ids`);
}

function validateReview(review: ReviewNode, path: string): void {
  if (review.when !== "") validateExpression(review.when, `${path}.when`);
  if (review.timeoutHours < 0 || review.timeoutHours > MAX_REVIEW_TIMEOUT_HOURS) {
    throw invalidPipeline(`${path}.timeout_hours`, `must be from 0 (no timeout) to ${MAX_REVIEW_TIMEOUT_HOURS}`);
  }
  if (!ReviewDecisionSchema.values.some((known) => known.number === review.timeoutDecision)) {
    throw invalidPipeline(`${path}.timeout_decision`, "must be REVIEW_DECISION_APPROVE or REVIEW_DECISION_REJECT");
  }
}

/**
 * The graph a pipeline's ids make: every id named exists and is not the trigger, no node is named
 * twice by one node, no cycle, and every node can be reached from the trigger. Linear in its size.
 */
function validateGraph(pipeline: Pipeline): void {
  const { nodes } = pipeline;
  const ids = new Set(nodes.map((node) => node.id));
  nodes.forEach((node, index) => {
    const named = new Set<string>();
    for (const edge of edgesOf(node, index, nodes)) {
      const field = `pipeline.nodes[${index}].${edge.field}`;
      if (!ids.has(edge.target)) throw invalidPipeline(field, `no node has the id "${edge.target.slice(0, 100)}"`);
      if (edge.target === nodes[0]!.id) throw invalidPipeline(field, "the trigger starts the run: no node can pass on to it");
      if (node.kind.case !== "route" && named.has(edge.target)) throw invalidPipeline(field, `"${edge.target}" is listed twice`);
      named.add(edge.target);
    }
  });
  const graph = pipelineGraph(pipeline);
  const onCycle = findCycle(graph);
  if (onCycle !== undefined) throw invalidPipeline(`pipeline.nodes[${onCycle}].next`, `node "${nodes[onCycle]!.id}" is on a cycle: a run would never end`);
  const seen = reachable(graph);
  const unreachable = seen.indexOf(false);
  if (unreachable !== -1) throw invalidPipeline(`pipeline.nodes[${unreachable}]`, `node "${nodes[unreachable]!.id}" cannot be reached from the trigger`);
  validateSplitAndMerge(pipeline, graph);
  validateChunksFollowParse(pipeline, graph);
  validateSources(pipeline, graph);
}

/**
 * An extract or classify node reads a parse output: the one its `source` names, which must be a
 * parse node of the pipeline on every way a run takes to the node, or when `source` is empty the
 * run's first, so some node that can give one must be on every way. Otherwise every run, or some,
 * would fail at that step with `source_missing`.
 */
function validateSources(pipeline: Pipeline, graph: ReturnType<typeof pipelineGraph>): void {
  const { nodes } = pipeline;
  const positions = new Map(nodes.map((node, index) => [node.id, index]));
  const withoutParseLike = reachedInSomeRun(nodes, graph, (position) => nodeDefinition(nodes[position]!.kind.case!).passesOnParse !== true);
  nodes.forEach((node, index) => {
    const { kind } = node;
    if (kind.case !== "extract" && kind.case !== "classify") return;
    const { source } = kind.value;
    const field = `pipeline.nodes[${index}].${kind.case}.source`;
    if (source === "") {
      if (withoutParseLike[index]) {
        throw invalidPipeline(
          field,
          "no parse node is on every way to this node (a split's parts start after the split; its merge goes on with the run's own outputs): some runs would have no parse output to read",
        );
      }
      return;
    }
    const at = positions.get(source);
    if (at === undefined || nodes[at]!.kind.case !== "parse") {
      throw invalidPipeline(
        field,
        `"${source.slice(0, 100)}" is not a parse node of this pipeline: name the parse node whose output is read, or leave it empty for the run's first`,
      );
    }
    if (reachedInSomeRun(nodes, graph, (position) => position !== at)[index]) {
      throw invalidPipeline(
        field,
        `parse node "${source}" is not on every way to this node (a split's parts start after the split; its merge goes on with the run's own outputs): some runs would have no output of it`,
      );
    }
  });
}

/**
 * Which nodes some run reaches without passing a node for which `passes` is false: the run from the
 * trigger, which at a split waits for its parts and goes on at the merge (if there is one) with its
 * own outputs, and a part's run, which starts after the split, without what came before it, and
 * ends before the merge.
 */
function reachedInSomeRun(nodes: readonly Node[], graph: ReturnType<typeof pipelineGraph>, passes: (position: number) => boolean): boolean[] {
  const split = nodes.findIndex((node) => node.kind.case === "split");
  const merge = nodes.findIndex((node) => node.kind.case === "merge");
  const parentGraph = { ...graph, successors: graph.successors.map((targets, position) => (position !== split ? targets : merge === -1 ? [] : [merge])) };
  const parent = reachable(parentGraph, [0], passes);
  if (split === -1) return parent;
  const part = reachable(graph, [split], (position) => position !== merge && passes(position));
  return parent.map((seen, position) => seen || (part[position]! && position !== merge));
}

/**
 * A chunk node cuts the elements of a parse before it: every way a run takes to it (see
 * reachedInSomeRun) must go through a parse node, or some runs would fail at that step.
 */
function validateChunksFollowParse(pipeline: Pipeline, graph: ReturnType<typeof pipelineGraph>): void {
  const { nodes } = pipeline;
  const withoutParse = reachedInSomeRun(nodes, graph, (position) => nodes[position]!.kind.case !== "parse");
  nodes.forEach((node, index) => {
    if (node.kind.case === "chunk" && withoutParse[index]) {
      throw invalidPipeline(
        `pipeline.nodes[${index}].chunk`,
        "a chunk node cuts a parse node's elements: it must come after a parse node on every way to it (a split's parts start after the split; its merge goes on with the run's own outputs)",
      );
    }
  });
}

/**
 * A pipeline splits at most once (a child run does not split again), and merges at most once, after
 * its split: a merge gathers the children of the split before it.
 */
function validateSplitAndMerge(pipeline: Pipeline, graph: ReturnType<typeof pipelineGraph>): void {
  const positions = (kind: NodeKind) => pipeline.nodes.flatMap((node, index) => (node.kind.case === kind ? [index] : []));
  const splits = positions("split");
  const merges = positions("merge");
  if (splits.length > 1) throw invalidPipeline(`pipeline.nodes[${splits[1]}].split`, "a pipeline has at most one split node");
  if (merges.length > 1) throw invalidPipeline(`pipeline.nodes[${merges[1]}].merge`, "a pipeline has at most one merge node");
  const merge = merges[0];
  if (merge !== undefined && (splits[0] === undefined || !ancestorsOf(graph, merge).has(splits[0]))) {
    throw invalidPipeline(`pipeline.nodes[${merge}].merge`, "a merge node gathers the child runs of a split: it must come after the split node");
  }
}

function validateChunk(chunk: ChunkNode, path: string): void {
  if (!ChunkStrategySchema.values.some((known) => known.number === chunk.strategy))
    throw invalidPipeline(`${path}.strategy`, "must be CHUNK_STRATEGY_BY_TITLE or CHUNK_STRATEGY_BY_SIZE");
  if (chunk.maxCharacters < 0 || chunk.maxCharacters > MAX_MAX_CHARACTERS)
    throw invalidPipeline(`${path}.max_characters`, `must be from 1 to ${MAX_MAX_CHARACTERS} (0 means ${DEFAULT_MAX_CHARACTERS})`);
  const max = chunk.maxCharacters === 0 ? DEFAULT_MAX_CHARACTERS : chunk.maxCharacters;
  if (chunk.overlapCharacters < 0 || chunk.overlapCharacters > max / 2)
    throw invalidPipeline(`${path}.overlap_characters`, "must be from 0 to half of max_characters");
}

function validateParse(parse: ParseNode, path: string): void {
  if (!OcrModeSchema.values.some((known) => known.number === parse.ocr))
    throw invalidPipeline(`${path}.ocr`, "must be OCR_MODE_AUTO, OCR_MODE_ALWAYS or OCR_MODE_NEVER");
  parse.languages.forEach((language, index) => {
    if (!isOcrLanguage(language)) {
      throw invalidPipeline(`${path}.languages[${index}]`, `OCR language "${language}" is not installed; installed: ${OCR_LANGUAGES.join(", ")}`);
    }
    if (parse.languages.indexOf(language) !== index) throw invalidPipeline(`${path}.languages[${index}]`, `"${language}" is listed twice`);
  });
}

function validateHttpTrigger(trigger: HttpTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.allowedOrigins.length > MAX_ALLOWED_ORIGINS) {
    throw invalidPipeline(`${path}.allowed_origins`, `at most ${MAX_ALLOWED_ORIGINS} origins`);
  }
  trigger.allowedOrigins.forEach((origin, index) => {
    if (!isAllowedOriginValue(origin)) {
      throw invalidPipeline(
        `${path}.allowed_origins[${index}]`,
        `"${origin}" must be "*" or an exact origin as browsers send it, such as "https://app.example.com:8443" `
          + "(http or https, lowercase, no path, no trailing slash, no default port)",
      );
    }
  });
  validateAcceptance(trigger, path, limits);
}

/** Accepted formats and size limit, as HTTP and email triggers both have them. */
function validateAcceptance(trigger: HttpTrigger | EmailTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.acceptedFormats.length === 0) {
    throw invalidPipeline(`${path}.accepted_formats`, `must list at least one of ${FORMAT_IDS.join(", ")}`);
  }
  const listed = new Set<string>();
  trigger.acceptedFormats.forEach((format, index) => {
    if (!isFormatId(format))
      throw invalidPipeline(`${path}.accepted_formats[${index}]`, `unknown format "${format.slice(0, 100)}"; known: ${FORMAT_IDS.join(", ")}`);
    if (listed.has(format)) throw invalidPipeline(`${path}.accepted_formats[${index}]`, `"${format}" is listed twice`);
    listed.add(format);
  });
  if (trigger.maxSizeMb < 1 || trigger.maxSizeMb > limits.maxSizeMbLimit) {
    throw invalidPipeline(`${path}.max_size_mb`, `must be from 1 to ${limits.maxSizeMbLimit}`);
  }
}

/**
 * "*" or a value that equals its own serialized origin: that is exactly what a browser puts in the
 * Origin header, so anything else (a path, a trailing slash, uppercase, the default port) could never match.
 */
export function isAllowedOriginValue(value: string): boolean {
  if (value === "*") return true;
  const url = URL.parse(value);
  return url !== null && (url.protocol === "http:" || url.protocol === "https:") && url.origin === value && ORIGIN_HOST.test(url.hostname);
}

function validateCallback(callback: CallbackNode, path: string, limits: PipelineLimits): void {
  const refused = checkCallbackUrl(callback.url, limits.allowPrivateCallbacks);
  if (refused !== undefined) throw invalidPipeline(`${path}.url`, refused);
  // Credentials in the URL would be stored and shown in clear; headers are sealed (see callback-headers).
  const { username, password } = new URL(callback.url);
  if (username !== "" || password !== "") throw invalidPipeline(`${path}.url`, "must not carry credentials (user:password@); send them in a header");
  if (!CallbackMethodSchema.values.some((known) => known.number === callback.method)) throw invalidPipeline(`${path}.method`, "must be POST, PUT or PATCH");
  validateRequestSettings(callback, path);
}

/** Headers, retries and timeout, as callbacks and HTTP request nodes both have them. */
function validateRequestSettings(request: CallbackNode | HttpRequestNode, path: string): void {
  const headers = Object.entries(request.headers);
  if (headers.length > MAX_CALLBACK_HEADERS) throw invalidPipeline(`${path}.headers`, `at most ${MAX_CALLBACK_HEADERS} headers`);
  for (const [name, value] of headers) {
    if (value.length > MAX_HEADER_VALUE_LENGTH)
      throw invalidPipeline(`${path}.headers`, `the value of "${name.slice(0, 100)}" is longer than ${MAX_HEADER_VALUE_LENGTH} characters`);
    if (!HEADER_NAME.test(name)) throw invalidPipeline(`${path}.headers`, `"${name.slice(0, 100)}" is not a valid header name`);
    if (HEADER_VALUE_FORBIDDEN.test(value))
      throw invalidPipeline(`${path}.headers`, `the value of "${name}" contains control characters or characters past U+00FF, which HTTP headers cannot carry`);
  }
  if (request.retryCount !== undefined && (request.retryCount < 0 || request.retryCount > MAX_RETRY_COUNT)) {
    throw invalidPipeline(`${path}.retry_count`, `must be from 0 to ${MAX_RETRY_COUNT}`);
  }
  if (request.timeoutSeconds !== undefined && (request.timeoutSeconds < MIN_TIMEOUT_SECONDS || request.timeoutSeconds > MAX_TIMEOUT_SECONDS)) {
    throw invalidPipeline(`${path}.timeout_seconds`, `must be from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}`);
  }
}

/** "*", "@example.com" or an address: what an email trigger's allowed_senders may hold. */
const SENDER = /^(?:\*|@[^\s@]+|[^\s@]+@[^\s@]+)$/;

function validateEmailTrigger(trigger: EmailTrigger, path: string, limits: PipelineLimits): void {
  if (trigger.allowedSenders.length > MAX_ALLOWED_ORIGINS) throw invalidPipeline(`${path}.allowed_senders`, `at most ${MAX_ALLOWED_ORIGINS} senders`);
  trigger.allowedSenders.forEach((sender, index) => {
    if (!SENDER.test(sender)) {
      throw invalidPipeline(`${path}.allowed_senders[${index}]`, `"${sender.slice(0, 100)}" must be "*", a domain such as "@example.com" or an address`);
    }
  });
  validateAcceptance(trigger, path, limits);
  for (const [field, value] of [
    ["max_messages_per_hour", trigger.maxMessagesPerHour],
    ["max_messages_per_sender_per_hour", trigger.maxMessagesPerSenderPerHour],
  ] as const) {
    if (value !== undefined && (value < 0 || value > MAX_MESSAGES_PER_HOUR))
      throw invalidPipeline(`${path}.${field}`, `must be from 0 to ${MAX_MESSAGES_PER_HOUR}`);
  }
}

/**
 * The data nodes' expressions, schemas and patterns are compiled here, so a pipe with one that
 * cannot run is refused when saved, naming the field (and the expression's position).
 */
function validateDataNode(node: Node, path: string): void {
  try {
    checkDataNode(node, path);
  } catch (error) {
    throw settingsError(error, path);
  }
  if (node.kind.case === "httpRequest") {
    validateRequestSettings(node.kind.value, path);
    if (!HttpMethodSchema.values.some((known) => known.number === (node.kind.value as HttpRequestNode).method)) {
      throw invalidPipeline(`${path}.method`, "must be GET, POST, PUT, PATCH or DELETE");
    }
  }
}

/**
 * Gives every node without an id "<kind>-<n>", n the smallest number not taken by another node,
 * so assigned ids never collide with given ones; then rejects duplicate given ids. Each kind's
 * counter only moves forward, so this is linear in the number of nodes.
 */
function assignNodeIds(nodes: Node[]): void {
  const taken = new Set<string>();
  nodes.forEach((node, index) => {
    if (node.id === "") return;
    if (taken.has(node.id)) throw invalidPipeline(`pipeline.nodes[${index}].id`, `"${node.id}" is used by an earlier node`);
    taken.add(node.id);
  });
  const next = new Map<string, number>();
  for (const node of nodes) {
    if (node.id !== "") continue;
    const kind = kindName(node.kind.case!);
    let n = next.get(kind) ?? 1;
    while (taken.has(`${kind}-${n}`)) n++;
    node.id = `${kind}-${n}`;
    taken.add(node.id);
    next.set(kind, n + 1);
  }
}
