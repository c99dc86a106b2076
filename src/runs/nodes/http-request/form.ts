import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the HTTP request node (its fields come from its settings message). */
export const httpRequestForm = {
  label: "HTTP request",
  summary: "Calls another system over HTTP mid-pipeline.",
  expressions: ["url", "body"],
} as const satisfies FormHints;
