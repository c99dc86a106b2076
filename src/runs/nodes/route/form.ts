import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the route node (its fields come from its settings message). */
export const routeForm = {
  label: "Route",
  summary: "Sends the run on to the targets of the first route whose condition holds.",
  expressions: ["routes.when"],
  nodeRefs: ["routes.to", "otherwise"],
} as const satisfies FormHints;
