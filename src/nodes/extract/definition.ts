import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";

/** The extract node. */
export const extractNode = {
  name: "extract",
  nodeType: NodeType.EXTRACT,
  instant: true,
  form: { label: "Extract", summary: "Reads named fields and tables out of a parsed document." },
} as const satisfies NodeDefinition;
