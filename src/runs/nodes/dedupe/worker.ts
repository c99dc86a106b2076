import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { type DedupeOutput, executeDedupe } from "./dedupe.ts";

/** A dedupe node ends its branch at a duplicate unless it goes on for a route to branch on. */
export const dedupeWorker = {
  execute: (node, data, step) =>
    executeDedupe(node.kind.value, data, nodeContext(step), {
      db: step.execution.db,
      pipeId: step.state.run.pipe_id,
      runId: step.state.run.id,
      now: new Date(),
      testMode: step.state.testMode,
    }),
  passesOn: (output, node) => (output.duplicate && !node.kind.value.continueOnDuplicate ? [] : undefined),
} satisfies NodeWorker<"dedupe", DedupeOutput>;
