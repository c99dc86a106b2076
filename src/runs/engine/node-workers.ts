import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { NodeWorker, RunState } from "../nodes/node-executor.ts";
import { putOutput } from "../nodes/output-placement.ts";
import type { NodeKind } from "../nodes/definition.ts";
import type { RunData } from "../nodes/run-data.ts";
import { callbackWorker } from "../nodes/callback/worker.ts";
import { chunkWorker } from "../nodes/chunk/worker.ts";
import { classifyWorker } from "../nodes/classify/worker.ts";
import { emailTriggerWorker } from "../nodes/email-trigger/worker.ts";
import { emailWorker } from "../nodes/email/worker.ts";
import { extractWorker } from "../nodes/extract/worker.ts";
import { httpRequestWorker } from "../nodes/http-request/worker.ts";
import { httpTriggerWorker } from "../nodes/http-trigger/worker.ts";
import { mergeWorker } from "../nodes/merge/worker.ts";
import { dedupeWorker } from "../nodes/dedupe/worker.ts";
import { parseWorker } from "../nodes/parse/worker.ts";
import { reviewWorker } from "../nodes/review/worker.ts";
import { routeWorker } from "../nodes/route/worker.ts";
import { splitWorker } from "../nodes/split/worker.ts";
import { transformWorker } from "../nodes/transform/worker.ts";
import { validateWorker } from "../nodes/validate/worker.ts";

/**
 * Every node kind's worker part (src/runs/nodes/<kind>/worker.ts): its executor, how its output goes in
 * the run data and what it passes on to. A kind without one is a compile error. Kept apart from
 * NODE_DEFINITIONS (src/runs/nodes/registry.ts), which the services load: only the worker loads this.
 */
const NODE_WORKERS = {
  httpTrigger: httpTriggerWorker,
  emailTrigger: emailTriggerWorker,
  parse: parseWorker,
  callback: callbackWorker,
  route: routeWorker,
  review: reviewWorker,
  extract: extractWorker,
  classify: classifyWorker,
  transform: transformWorker,
  validate: validateWorker,
  httpRequest: httpRequestWorker,
  email: emailWorker,
  chunk: chunkWorker,
  split: splitWorker,
  merge: mergeWorker,
  dedupe: dedupeWorker,
} as const satisfies { [K in NodeKind]: NodeWorker<K, unknown> };

/** A kind's worker part, as every one is typed (the registry pairs each kind with its own; TypeScript cannot follow that through a variable kind). */
export function nodeWorker(kind: NodeKind): NodeWorker<NodeKind> {
  return NODE_WORKERS[kind] as NodeWorker<NodeKind>;
}

/** Puts a completed step's output in the run data as its kind does (by default under its node id). */
export function addOutput(data: RunData, node: Node, output: unknown): void {
  const worker = node.kind.case === undefined ? undefined : nodeWorker(node.kind.case);
  if (worker?.addOutput === undefined) putOutput(data, node.id, output);
  else worker.addOutput(data, node as never, output);
}

/** The nodes a completed step passes on to (undefined: all its successors), as its kind says. */
export function passesOn(state: RunState, node: Node, output: unknown): readonly string[] | undefined {
  const worker = node.kind.case === undefined ? undefined : nodeWorker(node.kind.case);
  return worker?.passesOn?.(output, node as never, state);
}
