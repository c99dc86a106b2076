import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the parse node (its fields come from its settings message). */
export const parseForm = {
  label: "Parse",
  summary: "Extracts text and metadata from the document.",
} as const satisfies FormHints;
