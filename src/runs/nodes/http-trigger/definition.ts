import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { httpTriggerForm } from "./form.ts";
import { checkHttpTriggerSettings } from "./settings.ts";

/** The HTTP trigger node. */
export const httpTriggerNode = {
  name: "http_trigger",
  nodeType: NodeType.HTTP_TRIGGER,
  isTrigger: true,
  instant: true,
  form: httpTriggerForm,
  check: checkHttpTriggerSettings,
} as const satisfies NodeDefinition<"httpTrigger">;
