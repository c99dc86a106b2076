import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the email node (its fields come from its settings message). */
export const emailForm = {
  label: "Email",
  summary: "Sends the run's result by email.",
  expressions: ["to", "subject", "body"],
} as const satisfies FormHints;
