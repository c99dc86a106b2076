import { FORMAT_IDS } from "../../../documents/formats/format-ids.ts";
import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the HTTP trigger node (its fields come from its settings message). */
export const httpTriggerForm = {
  label: "HTTP trigger",
  summary: "Accepts documents over POST /pipes/{pipeId}/trigger.",
  choices: { accepted_formats: FORMAT_IDS },
} as const satisfies FormHints;
