import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { NodeKind, NodeOf } from "../nodes/definition.ts";
import { REVIEW_REJECTED } from "../nodes/review/review.ts";
import { definitionOfNode, kindName } from "../nodes/registry.ts";
import { TOO_MANY_QUEUED_RUNS } from "../nodes/split/split.ts";
import { NODE_STEP_ERROR_CODES } from "../step-error.ts";
import { initialRunData } from "../nodes/run-data.ts";
import { addOutput, nodeWorker, passesOn } from "./node-workers.ts";
import { inSpan } from "../../platform/observability/tracing.ts";
import { getFile } from "../../data/repositories/files.ts";
import type { Lease } from "../../data/repositories/held-run.ts";
import type { ClaimedRun, RunEndWrites } from "../../data/repositories/run-leases.ts";
import { endStep, type RunStepRow, recordedSteps, type StepNode, startStep } from "../../data/repositories/run-steps.ts";
import type { ExecutionContext, RunState } from "../nodes/node-executor.ts";
import { AwaitingChildren, Waiting } from "../nodes/node-executor.ts";
import { loadPipelineVersion } from "./pipeline-versions.ts";
import { ancestorsOf } from "../pipes/graph.ts";
import { POOL_STEP_ERROR_CODES } from "../nodes/pool-step.ts";
import { OUTPUT_TOO_LARGE, storableOutput } from "./step-output.ts";

export type { ExecutionContext } from "../nodes/node-executor.ts";

/**
 * `deliveries`: the callback deliveries the run queued, due once it has ended. `writes`: the steps
 * that did no I/O and the deliveries not written yet, written with the run's end in one statement.
 */
export type RunOutcome =
  | { status: "completed"; deliveries: number; writes: RunEndWrites }
  /** `reason` is bounded, for metrics: the failing step's error code, or `<node type>_failed`. */
  | { status: "failed"; error: string; reason: string; deliveries: number; writes?: RunEndWrites }
  /** A review step waits for its decision: the run leaves the worker until it is decided. */
  | { status: "review"; writes: RunEndWrites }
  /** A split step made its child runs: the run waits for them (its status was written with them). */
  | { status: "awaiting_children" }
  /** The run is no longer ours (cancelled, lease lost) or the worker is stopping; nothing more is written. */
  | { status: "stopped" };

/** The node type name steps record, such as "http_trigger". */
function nodeTypeOf(node: Node): string {
  return node.kind.case === undefined ? "unknown" : kindName(node.kind.case);
}

/**
 * Executes the pipeline version the run started with as a graph, recording a step for each node
 * it reaches. A node runs once every node that may pass on to it has run or been passed by, and
 * at least one passed on to it; several targets run as parallel branches. Resumable: steps a
 * previous attempt completed are not redone (their outputs are reused), an unfinished one is
 * redone. After a failure no node starts except callbacks, which report "Failed" so callers learn
 * of it; with `abandoned` (the run's error) the run has failed before it starts. A callback step only queues its delivery (src/runs/deliveries/), sent once the run has ended. Every write is guarded by the lease: once the run is no longer ours (cancelled, or taken
 * over) execution stops without writing anything more.
 */
export async function executeRun(context: ExecutionContext, run: ClaimedRun, lease: Lease, signal: AbortSignal, abandoned?: string): Promise<RunOutcome> {
  const { db } = context;
  const version = await loadPipelineVersion(db, run.pipe_id, run.pipeline_version);
  if ("missing" in version)
    return {
      status: "failed",
      error: `pipeline version ${run.pipeline_version} of pipe ${run.pipe_id} does not exist`,
      reason: "pipeline_unavailable",
      deliveries: 0,
    };
  if ("unreadable" in version)
    return {
      status: "failed",
      error: `pipeline version ${run.pipeline_version} cannot be read: ${version.unreadable}`,
      reason: "pipeline_unavailable",
      deliveries: 0,
    };
  const { pipeline, graph } = version;
  const file = await getFile(db, run.file_id);
  const recorded = await recordedSteps(db, run.id);
  const { nodes } = pipeline;
  const data = initialRunData({ name: file.name, format: file.format, size: Number(file.size), sha256: file.sha256 });
  const inFlight = new Set<Promise<void>>();
  /** What othersSettled waits on: resolved when a branch ends and one is left. */
  let alone: (() => void) | undefined;
  const othersSettled = () => (inFlight.size <= 1 ? Promise.resolve() : new Promise<void>((resolve) => (alone = resolve)));
  const upstreamOf = (nodeId: string) => new Set([...ancestorsOf(graph, graph.positions.get(nodeId)!)].map((position) => nodes[position]!.id));
  const state: RunState = {
    run,
    lease,
    file,
    nodes,
    upstreamOf,
    data,
    testMode: version.testMode,
    deliveries: 0,
    queued: [],
    ended: [],
    split: false,
    othersSettled,
  };
  // A run abandoned after its attempts runs nothing but its callbacks, which report it Failed.
  if (abandoned !== undefined) {
    state.failure = abandoned;
    state.failureReason = "abandoned";
  }
  const settled = nodes.map(() => 0);
  const passedTo = nodes.map(() => false);
  // A child run (one part of a split document) starts after its parent's split node.
  const start = run.start_node_id === null ? undefined : graph.positions.get(run.start_node_id);
  let stopped = false;
  let paused: "review" | "awaiting_children" | undefined;

  /** The reviews this attempt left waiting, by position: a failure elsewhere passes them by (see below). */
  const waitingReviews: number[] = [];
  /** Runs (or passes by) the node at `position`, then settles its successors. */
  const visit = async (position: number, passedOn: boolean): Promise<void> => {
    const node = nodes[position]!;
    let targets: readonly string[] | undefined;
    const passed = reached(node, position, passedOn);
    if (passed) {
      const step = await executeStep(context, state, node, position, recorded.get(position), lease, signal);
      if (step === "stopped") stopped = true;
      if (step === "waiting") waitingReviews.push(position);
      if (step === "stopped" || step === "waiting" || step === "awaiting_children") {
        if (step !== "stopped") paused ??= step === "waiting" ? "review" : step;
        return;
      }
      targets = step;
    }
    settle(position, passed, targets);
  };
  /** Counts the node at `position` as settled for its successors, passing on to `targets` (undefined: all) when it ran. */
  const settle = (position: number, passed: boolean, targets: readonly string[] | undefined) => {
    for (const successor of graph.successors[position]!) {
      settled[successor]!++;
      if (passed && (targets === undefined || targets.includes(nodes[successor]!.id))) passedTo[successor] = true;
      if (settled[successor] === graph.predecessorCounts[successor]) launch(successor, passedTo[successor]!);
    }
  };
  /**
   * Whether a node runs: one passed on to, except that a child run starts at its split node (whose
   * step its parent wrote) and stops before a merge node, which its parent runs once it has split
   * (see `afterChildren`).
   */
  const reached = (node: Node, position: number, passedOn: boolean): boolean => {
    const afterChildren = workerOf(node)?.afterChildren === true;
    if (start !== undefined) return (passedOn || position === start) && !afterChildren;
    return passedOn || (afterChildren && state.split);
  };
  /** The first error a branch broke off with (a write that failed): raised once the other branches have settled. */
  let broke: { error: unknown } | undefined;
  const launch = (position: number, passed: boolean) => {
    if (stopped || signal.aborted || broke !== undefined) return;
    // Caught here, not by the race below: a branch may fail while no race waits on it, and its
    // rejection would go unhandled, which ends the process.
    const visiting = visit(position, passed)
      .catch((error: unknown) => {
        broke ??= { error };
      })
      .finally(() => {
        inFlight.delete(visiting);
        if (inFlight.size <= 1) alone?.();
      });
    inFlight.add(visiting);
  };
  if (nodes.length > 0) launch(0, start === undefined);
  while (inFlight.size > 0) {
    await Promise.race(inFlight);
    // A run that failed does not wait for a review: the branches paused at one are passed by, as
    // every node after a failure is, so their callbacks too report the failure.
    if (inFlight.size === 0 && state.failure !== undefined) for (const position of waitingReviews.splice(0)) settle(position, true, undefined);
  }
  if (broke !== undefined) throw broke.error;
  if (stopped || signal.aborted) return { status: "stopped" };
  // Its steps so far were written with the children.
  if (paused === "awaiting_children") return { status: "awaiting_children" };
  const { failure } = state;
  // A failing run's end makes its callbacks that ran before the failure report it (see failedRunWrites).
  const writes: RunEndWrites = { steps: state.ended.splice(0), deliveries: state.queued.splice(0) };
  if (failure !== undefined) return { status: "failed", error: failure, reason: state.failureReason!, deliveries: state.deliveries, writes };
  return paused === "review" ? { status: "review", writes } : { status: "completed", deliveries: state.deliveries, writes };
}

/**
 * Executes one node (or reuses what an earlier attempt recorded for it). Returns the ids of the
 * nodes it passes on to (undefined: all its successors), "waiting" when it waits for a review, or
 * "stopped" when the run is no longer ours.
 */
async function executeStep(
  context: ExecutionContext,
  state: RunState,
  node: Node,
  position: number,
  previous: RunStepRow | undefined,
  lease: Lease,
  signal: AbortSignal,
): Promise<readonly string[] | undefined | "waiting" | "awaiting_children" | "stopped"> {
  if (signal.aborted) return "stopped";
  const nodeType = nodeTypeOf(node);
  const nodeId = node.id === "" ? `${nodeType}-${position}` : node.id;
  if (previous?.status === "completed") return keepOutput(state, node, previous.output);
  if (previous?.status === "waiting") return "waiting";
  if (previous?.status === "failed") {
    fail(state, nodeId, nodeType, previous.error);
    return undefined;
  }
  // After a failure only callbacks run; the others are passed by, to reach every branch's callbacks.
  if (state.failure !== undefined && workerOf(node)?.runsAfterFailure !== true) return undefined;
  // A step that does no I/O is written once, when it has ended: an attempt that dies meanwhile only evaluates it again.
  const instant = definitionOfNode(node)?.instant === true;
  const stepNode = { position, nodeId, nodeType };
  // The steps that ended before it, and the deliveries they queued, are written with its start.
  if (!instant && !(await startStep(context.db, lease, stepNode, state.ended.splice(0), state.queued.splice(0)))) return "stopped";
  // Measured here, around the step, whether it runs here or in the task pool.
  const started = performance.now();
  let result: { output: unknown } | { error: string } | { waiting: unknown };
  try {
    const output = await inSpan(`step ${nodeType}`, { attributes: { "docpipe.node.type": nodeType, "docpipe.node.id": nodeId } }, () =>
      executeNode(context, state, node, stepNode, signal),
    );
    if (output instanceof AwaitingChildren) {
      context.metrics?.stepDuration.observe({ node_type: nodeType, format: state.file.format, outcome: "completed" }, (performance.now() - started) / 1000);
      return output.held ? "awaiting_children" : "stopped";
    }
    // Made storable here, so the callback's data is exactly what the step stores; one past its size limit fails the step.
    const stored = storableOutput(output instanceof Waiting ? output.output : output);
    result = "error" in stored ? stored : output instanceof Waiting ? { waiting: stored.value } : { output: stored.value };
  } catch (error) {
    if (signal.aborted) return "stopped";
    result = { error: (error as Error).message };
  }
  const outcome = "error" in result ? "failed" : "completed";
  context.metrics?.stepDuration.observe({ node_type: nodeType, format: state.file.format, outcome }, (performance.now() - started) / 1000);
  if (instant) state.ended.push({ node: stepNode, result });
  else if (!(await endStep(context.db, lease, position, result))) return "stopped";
  if ("waiting" in result) return "waiting";
  if ("error" in result) {
    fail(state, nodeId, nodeType, result.error);
    return undefined;
  }
  return keepOutput(state, node, result.output);
}

/** The worker part of a node's kind; undefined for a node of a kind this worker does not know. */
function workerOf(node: Node) {
  return node.kind.case === undefined ? undefined : nodeWorker(node.kind.case);
}

/** Runs one node through its kind's executor; its result is the step output. */
async function executeNode(context: ExecutionContext, state: RunState, node: Node, stepNode: StepNode, signal: AbortSignal): Promise<unknown> {
  const worker = workerOf(node);
  if (worker === undefined) throw new Error("the node has no type this worker knows");
  return worker.execute(node as NodeOf<NodeKind>, state.data, { execution: context, state, step: stepNode, signal, addOutput });
}

/** Puts a completed step's output in the run data (see addOutput) and returns the nodes it passes on to (undefined: all). */
function keepOutput(state: RunState, node: Node, output: unknown): readonly string[] | undefined {
  addOutput(state.data, node, output);
  return passesOn(state, node, output);
}

/** Codes a step's error may start with (`parse_timeout: ...`); any other failure is counted as `<node type>_failed`. */
const STEP_ERROR_CODES = new Set<string>([...POOL_STEP_ERROR_CODES, ...NODE_STEP_ERROR_CODES, OUTPUT_TOO_LARGE, REVIEW_REJECTED, TOO_MANY_QUEUED_RUNS]);

/** Keeps the run's first failure and its bounded reason. */
function fail(state: RunState, nodeId: string, nodeType: string, error: string): void {
  if (state.failure !== undefined) return;
  state.failure = stepFailure(nodeId, nodeType, error);
  const code = /^([a-z_]+):/.exec(error)?.[1];
  state.failureReason = code !== undefined && STEP_ERROR_CODES.has(code) ? code : `${nodeType}_failed`;
}

/** The run's error for a failed step. */
function stepFailure(nodeId: string, nodeType: string, error: string): string {
  return `step ${nodeId} (${nodeType}) failed: ${error}`;
}
