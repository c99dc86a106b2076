import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the review node (its fields come from its settings message). */
export const reviewForm = {
  label: "Review",
  summary: "Stops the run for a person (or a program) to approve or reject its data.",
  expressions: ["when"],
} as const satisfies FormHints;
