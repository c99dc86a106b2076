import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the validate node (its fields come from its settings message). */
export const validateForm = {
  label: "Validate",
  summary: "Checks part of the run data against a JSON Schema.",
  expressions: ["select"],
  multiline: ["schema"],
} as const satisfies FormHints;
