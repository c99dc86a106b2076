import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { transformForm } from "./form.ts";
import { checkTransformSettings } from "./settings.ts";

/** The transform node. */
export const transformNode = {
  name: "transform",
  nodeType: NodeType.TRANSFORM,
  instant: true,
  passesOnParse: true,
  form: transformForm,
  check: checkTransformSettings,
} as const satisfies NodeDefinition<"transform">;
