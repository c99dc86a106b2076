import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the extract node (its fields come from its settings message). */
export const extractForm = {
  label: "Extract",
  summary: "Reads named fields and tables out of a parsed document.",
  nodeRefs: ["source"],
} as const satisfies FormHints;
