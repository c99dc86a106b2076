import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkHttpTriggerSettings } from "./settings.ts";

/** The HTTP trigger node. */
export const httpTriggerNode = {
  name: "http_trigger",
  nodeType: NodeType.HTTP_TRIGGER,
  isTrigger: true,
  instant: true,
  form: { label: "HTTP trigger", summary: "Accepts documents over POST /pipes/{pipeId}/trigger." },
  check: checkHttpTriggerSettings,
} as const satisfies NodeDefinition<"httpTrigger">;
