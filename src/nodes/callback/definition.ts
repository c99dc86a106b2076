import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { callbackForm } from "./form.ts";
import { checkCallbackSettings } from "./settings.ts";

/** The callback node. */
export const callbackNode = {
  name: "callback",
  nodeType: NodeType.CALLBACK,
  instant: true,
  form: callbackForm,
  check: checkCallbackSettings,
} as const satisfies NodeDefinition<"callback">;
