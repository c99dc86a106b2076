import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { acceptedFile } from "../node-context.ts";
import { checkEmailTriggerSettings } from "./settings.ts";

/** The email trigger node. */
export const emailTriggerNode = {
  name: "email_trigger",
  nodeType: NodeType.EMAIL_TRIGGER,
  isTrigger: true,
  instant: true,
  form: { label: "Email trigger", summary: "Accepts documents sent by email to <pipe id>@<EMAIL_DOMAIN>." },
  check: checkEmailTriggerSettings,
  // The email server did the trigger's work; the step shows what it accepted.
  execute: async (_node, _data, { state }) => ({ ...acceptedFile(state), email: state.run.email ?? null }),
} as const satisfies NodeDefinition<"emailTrigger">;
