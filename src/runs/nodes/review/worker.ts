import type { NodeWorker } from "../node-executor.ts";
import { correctRunData } from "../output-placement.ts";
import { executeReview, type ReviewOutput } from "./review.ts";

/**
 * A review's output is its decision; an approved review's `data` (the reviewer's corrections)
 * replaces those members of the run data, whatever order the outputs are put back in.
 */
export const reviewWorker = {
  execute: executeReview,
  addOutput(data, node, output) {
    const { data: corrected, ...decision } = output;
    if (corrected !== undefined) correctRunData(data, corrected);
    data[node.id] = decision;
  },
} satisfies NodeWorker<"review", ReviewOutput>;
