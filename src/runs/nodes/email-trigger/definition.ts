import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { emailTriggerForm } from "./form.ts";
import { checkEmailTriggerSettings } from "./settings.ts";

/** The email trigger node. */
export const emailTriggerNode = {
  name: "email_trigger",
  nodeType: NodeType.EMAIL_TRIGGER,
  isTrigger: true,
  mayFollowTrigger: "httpTrigger",
  instant: true,
  form: emailTriggerForm,
  check: checkEmailTriggerSettings,
} as const satisfies NodeDefinition<"emailTrigger">;
