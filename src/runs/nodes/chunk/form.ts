import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the chunk node (its fields come from its settings message). */
export const chunkForm = {
  label: "Chunk",
  summary: "Splits the elements of the parse before it into chunks for retrieval.",
} as const satisfies FormHints;
