import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";

/** The split node. */
export const splitNode = {
  name: "split",
  nodeType: NodeType.SPLIT,
  form: { label: "Split", summary: "Splits a PDF or multi-page TIFF into parts, one child run per part." },
} as const satisfies NodeDefinition;
