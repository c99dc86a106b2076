import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkTransformSettings } from "./settings.ts";

/** The transform node. */
export const transformNode = {
  name: "transform",
  nodeType: NodeType.TRANSFORM,
  instant: true,
  passesOnParse: true,
  form: { label: "Transform", summary: "Computes a value from the run data with a JSONata expression." },
  check: checkTransformSettings,
} as const satisfies NodeDefinition<"transform">;
