import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the transform node (its fields come from its settings message). */
export const transformForm = {
  label: "Transform",
  summary: "Computes a value from the run data with a JSONata expression.",
  expressions: ["expression"],
} as const satisfies FormHints;
