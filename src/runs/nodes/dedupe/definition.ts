import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { dedupeForm } from "./form.ts";
import { checkDedupeSettings } from "./settings.ts";

/** The dedupe node: not instant, it records the key it saw. */
export const dedupeNode = {
  name: "dedupe",
  nodeType: NodeType.DEDUPE,
  form: dedupeForm,
  check: checkDedupeSettings,
} as const satisfies NodeDefinition<"dedupe">;
