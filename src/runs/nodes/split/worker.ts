import type { NodeWorker } from "../node-executor.ts";
import { executeSplit } from "./split.ts";

/**
 * A split passes on to none in the run that split (its child runs took its branch, and its merge
 * runs here once they have ended), and to all in a child run, which starts after it.
 */
export const splitWorker = {
  execute: executeSplit,
  passesOn(_output, node, state) {
    if (state.run.start_node_id === node.id) return undefined;
    state.split = true;
    return [];
  },
} satisfies NodeWorker<"split">;
