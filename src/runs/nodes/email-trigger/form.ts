import { FORMAT_IDS } from "../../../documents/formats/format-ids.ts";
import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the email trigger node (its fields come from its settings message). */
export const emailTriggerForm = {
  label: "Email trigger",
  summary: "Accepts documents sent by email to <pipe id>@<EMAIL_DOMAIN>.",
  choices: { accepted_formats: FORMAT_IDS },
} as const satisfies FormHints;
