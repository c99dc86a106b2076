import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkEmailTriggerSettings } from "./settings.ts";

/** The email trigger node. */
export const emailTriggerNode = {
  name: "email_trigger",
  nodeType: NodeType.EMAIL_TRIGGER,
  isTrigger: true,
  instant: true,
  form: { label: "Email trigger", summary: "Accepts documents sent by email to <pipe id>@<EMAIL_DOMAIN>." },
  check: checkEmailTriggerSettings,
} as const satisfies NodeDefinition<"emailTrigger">;
