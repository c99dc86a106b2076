import { chunkStep } from "../../chunk/chunk-step.ts";
import { ancestorsOf, pipelineGraph } from "../../pipes/graph.ts";
import type { NodeWorker } from "../../worker/node-executor.ts";
import { latestParseOutput } from "../../worker/run-data.ts";

/** A chunk cuts the elements of the latest parse on its own way (a parse it can be reached from). */
export const chunkWorker = {
  execute: async (node, data, { state }) => {
    const graph = pipelineGraph({ nodes: state.nodes });
    const before = new Set([...ancestorsOf(graph, graph.positions.get(node.id)!)].map((position) => state.nodes[position]!.id));
    return chunkStep(node.kind.value, latestParseOutput(data, before));
  },
} satisfies NodeWorker<"chunk">;
