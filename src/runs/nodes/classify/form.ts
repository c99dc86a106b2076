import { FORMAT_IDS } from "../../../documents/formats/format-ids.ts";
import type { FormHints } from "../form-hints.ts";

/** How the console's form shows the classify node (its fields come from its settings message). */
export const classifyForm = {
  label: "Classify",
  summary: "Gives the document a class from rules.",
  nodeRefs: ["source"],
  choices: { "classes.rules.formats": FORMAT_IDS },
} as const satisfies FormHints;
