import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { runValidate } from "./validate.ts";

/** The validate node reads the run data only. */
export const validateWorker = {
  execute: (node, data, step) => runValidate(node.kind.value, data, nodeContext(step)),
} satisfies NodeWorker<"validate">;
