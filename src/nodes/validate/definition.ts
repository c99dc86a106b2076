import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { validateForm } from "./form.ts";
import { checkValidateSettings } from "./settings.ts";

/** The validate node. */
export const validateNode = {
  name: "validate",
  nodeType: NodeType.VALIDATE,
  instant: true,
  form: validateForm,
  check: checkValidateSettings,
} as const satisfies NodeDefinition<"validate">;
