import type { NodeWorker } from "../node-executor.ts";
import { executeMerge } from "./merge.ts";

/** A merge gathers the child runs of the split before it, in the run that split, once they have ended. */
export const mergeWorker = { execute: executeMerge, afterChildren: true } satisfies NodeWorker<"merge">;
