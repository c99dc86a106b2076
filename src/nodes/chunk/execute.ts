import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import { chunkStep } from "../../chunk/chunk-step.ts";
import { ancestorsOf, pipelineGraph } from "../../pipes/graph.ts";
import type { NodeExecutor } from "../../worker/node-executor.ts";
import { latestParseOutput } from "../../worker/run-data.ts";

/** The ids of the parse nodes `nodeId` can be reached from: the parses on its own way, whose elements a chunk node cuts. */
function parsesBefore(nodes: readonly Node[], nodeId: string): Set<string> {
  const graph = pipelineGraph({ nodes });
  const ancestors = ancestorsOf(graph, graph.positions.get(nodeId)!);
  return new Set([...ancestors].flatMap((position) => (nodes[position]!.kind.case === "parse" ? [nodes[position]!.id] : [])));
}

/** Cuts the elements of the parse before it, on its own way, that was put in the run data last. */
export const executeChunk: NodeExecutor<"chunk"> = async (node, data, { state }) =>
  chunkStep(node.kind.value, latestParseOutput(data, parsesBefore(state.nodes, node.id)));
