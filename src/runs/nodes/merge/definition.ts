import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { mergeForm } from "./form.ts";

/** The merge node. */
export const mergeNode = {
  name: "merge",
  nodeType: NodeType.MERGE,
  merges: true,
  form: mergeForm,
} as const satisfies NodeDefinition<"merge">;
