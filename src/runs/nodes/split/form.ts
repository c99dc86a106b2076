import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the split node (its fields come from its settings message). */
export const splitForm = {
  label: "Split",
  summary: "Splits a PDF or multi-page TIFF into parts, one child run per part.",
} as const satisfies FormHints;
