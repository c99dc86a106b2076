import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkCallbackSettings } from "./settings.ts";

/** The callback node. */
export const callbackNode = {
  name: "callback",
  nodeType: NodeType.CALLBACK,
  instant: true,
  form: { label: "Callback", summary: "Sends the run's result to an HTTP endpoint." },
  check: checkCallbackSettings,
} as const satisfies NodeDefinition<"callback">;
