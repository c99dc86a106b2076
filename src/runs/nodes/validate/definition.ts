import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { compileSchema, runValidate } from "./validate.ts";
import { validateForm } from "./form.ts";
import { checkValidateSettings } from "./settings.ts";

/** The validate node. */
export const validateNode = {
  name: "validate",
  nodeType: NodeType.VALIDATE,
  instant: true,
  form: validateForm,
  check: checkValidateSettings,
  checkInThread: (settings, path) => compileSchema(settings.schema, `${path}.schema`),
  // A check that fails records `valid: false`: the reviewer approved, so the run goes on.
  rerunOnCorrection: (settings, input, caller, nodeId) => runValidate({ ...settings, continueOnInvalid: true }, input, caller, nodeId),
} as const satisfies NodeDefinition<"validate">;
