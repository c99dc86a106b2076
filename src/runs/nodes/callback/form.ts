import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the callback node (its fields come from its settings message). */
export const callbackForm = {
  label: "Callback",
  summary: "Sends the run's result to an HTTP endpoint.",
} as const satisfies FormHints;
