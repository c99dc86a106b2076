import type { RunData } from "./run-data.ts";

// How the worker puts steps' outputs in the run data (src/runs/nodes/run-data.ts); each kind's worker
// part (src/runs/nodes/<kind>/worker.ts) says which of these its output takes.

/**
 * The members of each run data that a reviewer corrected, and their corrected values. A resumed run
 * puts its completed steps' outputs back in the order of the graph, where a review may come before
 * a node on a parallel branch whose output it corrected: that output, put back after, must not
 * undo the correction.
 */
const corrections = new WeakMap<RunData, Map<string, unknown>>();

/**
 * The parse nodes whose outputs each run data holds, in the order they were put in: a run data is
 * keyed by node id, and JavaScript lists integer-like keys ("2") first whatever their order.
 */
const parses = new WeakMap<RunData, string[]>();

/** The output of the parse among `candidates` (node ids) put in the run data last, if any: the one a chunk node cuts. */
export function latestParseOutput(data: RunData, candidates: ReadonlySet<string>): unknown {
  const order = parses.get(data) ?? [];
  for (let index = order.length - 1; index >= 0; index--) {
    if (candidates.has(order[index]!)) return data[order[index]!];
  }
  return undefined;
}

/**
 * Puts a step's output in the run data under its node id (a reviewer's correction of it, if any,
 * wins); the first output with a page count gives the document's `file` its page count.
 */
export function putOutput(data: RunData, nodeId: string, output: unknown): void {
  const corrected = corrections.get(data);
  data[nodeId] = corrected?.has(nodeId) ? corrected.get(nodeId) : output;
  const pageCount = (output as { pageCount?: unknown } | null)?.pageCount;
  // (A pipeline saved before `file` was refused as a node id may have put something else there.)
  const file = data.file as Record<string, unknown> | null | undefined;
  if (typeof pageCount === "number" && typeof file === "object" && file !== null && file.pageCount === undefined) file.pageCount = pageCount;
}

/** Puts a parse step's output in the run data, and remembers it as the latest parse (see latestParseOutput). */
export function putParseOutput(data: RunData, nodeId: string, output: unknown): void {
  putOutput(data, nodeId, output);
  const order = parses.get(data) ?? [];
  parses.set(data, order);
  order.push(nodeId);
}

/**
 * Replaces members of the run data with a reviewer's corrections (never its `file`), whatever order
 * the outputs are put back in.
 */
export function correctRunData(data: RunData, corrected: Record<string, unknown>): void {
  const overlay = corrections.get(data) ?? new Map<string, unknown>();
  corrections.set(data, overlay);
  for (const [key, value] of Object.entries(corrected)) {
    if (key === "file") continue;
    overlay.set(key, value);
    data[key] = value;
  }
}
