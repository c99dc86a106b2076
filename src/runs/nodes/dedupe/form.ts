import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the dedupe node (its fields come from its settings message). */
export const dedupeForm = {
  label: "Dedupe",
  summary: "Drops a document whose key (such as invoice number and sender) this pipe saw within some days.",
  expressions: ["key"],
} as const satisfies FormHints;
