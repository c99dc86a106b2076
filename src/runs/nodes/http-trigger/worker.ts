import type { NodeWorker } from "../node-executor.ts";
import { acceptedFile } from "../run-document.ts";

/**
 * The edge did the HTTP trigger's work: its step shows the document it accepted. Its output stays
 * out of the run data, whose `file` describes the document already.
 */
export const httpTriggerWorker = {
  execute: async (_node, _data, { state }) => acceptedFile(state.file),
  addOutput() {},
} satisfies NodeWorker<"httpTrigger">;
