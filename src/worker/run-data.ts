import type { Node } from "../../gen/docpipe/v1/pipe_pb.js";
import type { RunData } from "./node-executor.ts";
import type { RouteOutput } from "../nodes/route/route.ts";

/** The run data a run starts with: its document. */
export function initialRunData(file: { name: string; format: string; size: number; sha256: string }): RunData {
  return { file: { name: file.name, format: file.format, size: file.size, sha256: file.sha256 } };
}

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

/** The output the run data holds for `nodeId`: a reviewer's correction of it, if any, wins. */
function kept(data: RunData, nodeId: string, output: unknown): unknown {
  const corrected = corrections.get(data);
  return corrected?.has(nodeId) ? corrected.get(nodeId) : output;
}

/**
 * Puts a completed step's output in the run data and returns the nodes it passes on to (undefined:
 * all). The trigger's output is the run data's `file`, and a callback's is a delivery record, so
 * neither is added; an approved review replaces the data with the reviewer's corrections, whatever
 * order the outputs are put back in.
 */
export function addOutput(data: RunData, node: Node, output: unknown): readonly string[] | undefined {
  switch (node.kind.case) {
    case "httpTrigger":
    case "callback":
      return undefined;
    case "route":
      data[node.id] = kept(data, node.id, output);
      return (output as RouteOutput | null)?.to ?? [];
    case "review": {
      const { data: corrected, ...decision } = output as { data?: Record<string, unknown> };
      if (corrected !== undefined) {
        const overlay = corrections.get(data) ?? new Map<string, unknown>();
        corrections.set(data, overlay);
        for (const [key, value] of Object.entries(corrected)) {
          if (key === "file") continue;
          overlay.set(key, value);
          data[key] = value;
        }
      }
      data[node.id] = decision;
      return undefined;
    }
    default: {
      data[node.id] = kept(data, node.id, output);
      if (node.kind.case === "parse") {
        const order = parses.get(data) ?? [];
        parses.set(data, order);
        order.push(node.id);
      }
      const pageCount = (output as { pageCount?: unknown } | null)?.pageCount;
      // (A pipeline saved before `file` was refused as a node id may have put something else there.)
      const file = data.file as RunData["file"] | null;
      if (typeof pageCount === "number" && typeof file === "object" && file !== null && file.pageCount === undefined) file.pageCount = pageCount;
      return undefined;
    }
  }
}
