import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { nodeContext } from "../node-context.ts";
import { runTransform } from "./transform.ts";
import { checkTransformSettings } from "./settings.ts";

/** The transform node. */
export const transformNode = {
  name: "transform",
  nodeType: NodeType.TRANSFORM,
  instant: true,
  passesOnParse: true,
  form: { label: "Transform", summary: "Computes a value from the run data with a JSONata expression." },
  check: checkTransformSettings,
  execute: (node, data, step) => runTransform(node.kind.value, data, nodeContext(step)),
} as const satisfies NodeDefinition<"transform">;
