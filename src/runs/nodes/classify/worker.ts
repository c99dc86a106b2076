import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { runClassify } from "./classify.ts";

/** The classify node reads the run data only. */
export const classifyWorker = {
  execute: (node, data, step) => runClassify(node.kind.value, data, nodeContext(step)),
} satisfies NodeWorker<"classify">;
