import { chunkStep } from "../../../documents/chunk/chunk-step.ts";
import type { NodeWorker } from "../node-executor.ts";
import { latestParseOutput } from "../output-placement.ts";

/** A chunk cuts the elements of the latest parse on its own way (a parse it can be reached from). */
export const chunkWorker = {
  execute: async (node, data, { state }) => {
    return chunkStep(node.kind.value, latestParseOutput(data, state.upstreamOf(node.id)));
  },
} satisfies NodeWorker<"chunk">;
