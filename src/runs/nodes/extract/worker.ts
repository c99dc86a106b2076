import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { runExtract } from "./extract.ts";

/** The extract node reads the run data only. */
export const extractWorker = {
  execute: (node, data, step) => runExtract(node.kind.value, data, nodeContext(step)),
} satisfies NodeWorker<"extract">;
