import { clone, toJson } from "@bufbuild/protobuf";
import { type Node, type Pipeline, PipelineSchema } from "../../../gen/docpipe/v1/pipe_pb.js";
import { isStorableText } from "../../data/db/storable.ts";
import type { NodeDefinition, PipelineLimits } from "../nodes/definition.ts";
import { definitionOfNode, kindName, NODE_KINDS, nodeDefinition } from "../nodes/registry.ts";
import { MAX_PIPELINE_NODES } from "../nodes/settings.ts";
import { StepError } from "../step-error.ts";
import { ancestorsOf, edgesOf, findCycle, pipelineGraph, reachable } from "./graph.ts";

const NODE_ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** The run data's member that describes the document: no node may be given its name. */
const RUN_DATA_FILE = "file";

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

/** The definition of a node's kind (a node of a valid pipeline has one). */
function definitionOf(node: Node): NodeDefinition {
  return definitionOfNode(node)!;
}

/**
 * Compiles the JSON Schemas of a valid pipeline's validate nodes, in a matching thread (see
 * compileSchema), as a pipe is saved: throws a PipelineError, reason "invalid_pipeline", naming the
 * first schema Ajv refuses. Apart from validatePipeline, which stays synchronous; a schema does not
 * depend on the operator's limits, so an activation does not compile it again.
 */
export async function compilePipelineSchemas(pipeline: Pipeline): Promise<void> {
  for (const [index, node] of pipeline.nodes.entries()) {
    const definition = definitionOf(node);
    if (definition.checkInThread === undefined) continue;
    const path = `pipeline.nodes[${index}].${definition.name}`;
    try {
      await definition.checkInThread(node.kind.value!, path);
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

/** The kinds that pass on through their settings, not `next` (see NodeDefinition.edges), as a refusal names them. */
const OWN_EDGES_NAMES = NODE_KINDS.filter((kind) => nodeDefinition(kind).edges !== undefined)
  .map(kindName)
  .join(" or ");

function validateNode(node: Node, path: string, index: number, limits: PipelineLimits, previous: Node | undefined): void {
  if (node.id !== "" && !NODE_ID.test(node.id)) {
    throw invalidPipeline(`${path}.id`, "must be 1..63 lowercase letters, digits, '_' or '-', starting with a letter or digit");
  }
  // A node's output is the run data's member of its id, and `file` is the run's document there.
  if (node.id === RUN_DATA_FILE) throw invalidPipeline(`${path}.id`, `"${RUN_DATA_FILE}" is the run data's document: name the node otherwise`);
  const kind = node.kind;
  if (kind.case === undefined) throw invalidPipeline(path, `unknown node type: set one of ${NODE_KINDS.map(kindName).join(", ")}`);
  if (node.next.length > MAX_PIPELINE_NODES) throw invalidPipeline(`${path}.next`, `at most ${MAX_PIPELINE_NODES} node ids`);
  const definition = nodeDefinition(kind.case);
  if (definition.edges !== undefined && node.next.length > 0)
    throw invalidPipeline(`${path}.next`, `a ${definition.name} node passes on through ${definition.passesOnThrough}: next must be empty`);
  if (node.endBranch && (definition.edges !== undefined || node.next.length > 0)) {
    throw invalidPipeline(`${path}.end_branch`, `ends a branch only on a node without next, and never on a ${OWN_EDGES_NAMES} node`);
  }
  if (index === 0 && definition.isTrigger !== true) throw invalidPipeline(path, "a pipeline must start with an http_trigger or email_trigger node");
  const triggerAllowed = index === 0 || (index === 1 && definition.mayFollowTrigger !== undefined && previous?.kind.case === definition.mayFollowTrigger);
  if (definition.isTrigger === true && !triggerAllowed) {
    throw invalidPipeline(`${path}.${definition.name}`, "triggers come first: an http_trigger, an email_trigger, or an http_trigger then an email_trigger");
  }
  const at = `${path}.${definition.name}`;
  try {
    definition.check?.(kind.value, at, limits);
  } catch (error) {
    throw settingsError(error, at);
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
      if (definitionOf(node).edges === undefined && named.has(edge.target)) throw invalidPipeline(field, `"${edge.target}" is listed twice`);
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
  const withoutParseLike = reachedInSomeRun(nodes, graph, (position) => definitionOf(nodes[position]!).passesOnParse !== true);
  nodes.forEach((node, index) => {
    const definition = definitionOf(node);
    if (definition.parseSource === undefined) return;
    const source = definition.parseSource(node.kind.value!);
    const field = `pipeline.nodes[${index}].${definition.name}.source`;
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
    if (at === undefined || definitionOf(nodes[at]!).parses !== true) {
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
  const split = nodes.findIndex((node) => definitionOf(node).splits === true);
  const merge = nodes.findIndex((node) => definitionOf(node).merges === true);
  const parentGraph = { ...graph, successors: graph.successors.map((targets, position) => (position !== split ? targets : merge === -1 ? [] : [merge])) };
  const parent = reachable(parentGraph, [0], passes);
  if (split === -1) return parent;
  const part = reachable(graph, [split], (position) => position !== merge && passes(position));
  return parent.map((seen, position) => seen || (part[position]! && position !== merge));
}

/**
 * A pipeline splits at most once (a child run does not split again), and merges at most once, after
 * its split: a merge gathers the children of the split before it.
 */
function validateSplitAndMerge(pipeline: Pipeline, graph: ReturnType<typeof pipelineGraph>): void {
  const positions = (role: "splits" | "merges") => pipeline.nodes.flatMap((node, index) => (definitionOf(node)[role] === true ? [index] : []));
  const atMostOne = (found: number[]) => {
    if (found.length < 2) return;
    const name = definitionOf(pipeline.nodes[found[1]!]!).name;
    throw invalidPipeline(`pipeline.nodes[${found[1]}].${name}`, `a pipeline has at most one ${name} node`);
  };
  const splits = positions("splits");
  const merges = positions("merges");
  atMostOne(splits);
  atMostOne(merges);
  const merge = merges[0];
  if (merge !== undefined && (splits[0] === undefined || !ancestorsOf(graph, merge).has(splits[0]))) {
    const name = definitionOf(pipeline.nodes[merge]!).name;
    throw invalidPipeline(`pipeline.nodes[${merge}].${name}`, `a ${name} node gathers the child runs of a split: it must come after the split node`);
  }
}

/**
 * A chunk node cuts the elements of a parse before it: every way a run takes to it (see
 * reachedInSomeRun) must go through a parse node, or some runs would fail at that step.
 */
function validateChunksFollowParse(pipeline: Pipeline, graph: ReturnType<typeof pipelineGraph>): void {
  const { nodes } = pipeline;
  const withoutParse = reachedInSomeRun(nodes, graph, (position) => definitionOf(nodes[position]!).parses !== true);
  nodes.forEach((node, index) => {
    const definition = definitionOf(node);
    if (definition.needsParse !== undefined && withoutParse[index]) {
      throw invalidPipeline(
        `pipeline.nodes[${index}].${definition.name}`,
        `${definition.needsParse}: it must come after a parse node on every way to it (a split's parts start after the split; its merge goes on with the run's own outputs)`,
      );
    }
  });
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
