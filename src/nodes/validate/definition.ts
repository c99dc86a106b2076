import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkValidateSettings } from "./settings.ts";

/** The validate node. */
export const validateNode = {
  name: "validate",
  nodeType: NodeType.VALIDATE,
  instant: true,
  form: { label: "Validate", summary: "Checks part of the run data against a JSON Schema." },
  check: checkValidateSettings,
} as const satisfies NodeDefinition<"validate">;
