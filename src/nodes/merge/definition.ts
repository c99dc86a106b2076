import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";

/** The merge node. */
export const mergeNode = {
  name: "merge",
  nodeType: NodeType.MERGE,
  form: { label: "Merge", summary: "Gathers the child runs of the split before it." },
} as const satisfies NodeDefinition<"merge">;
