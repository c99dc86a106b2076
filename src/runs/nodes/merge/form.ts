import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the merge node (its fields come from its settings message). */
export const mergeForm = {
  label: "Merge",
  summary: "Gathers the child runs of the split before it.",
} as const satisfies FormHints;
