import type { NodeWorker } from "../node-executor.ts";
import { nodeContext } from "../run-document.ts";
import { runTransform } from "./transform.ts";

/** The transform node reads the run data only. */
export const transformWorker = {
  execute: (node, data, step) => runTransform(node.kind.value, data, nodeContext(step)),
} satisfies NodeWorker<"transform">;
