import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkClassifySettings } from "./settings.ts";

/** The classify node. */
export const classifyNode = {
  name: "classify",
  nodeType: NodeType.CLASSIFY,
  instant: true,
  form: { label: "Classify", summary: "Gives the document a class from rules." },
  check: checkClassifySettings,
} as const satisfies NodeDefinition<"classify">;
