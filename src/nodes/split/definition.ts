import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkSplitSettings } from "./settings.ts";

/** The split node. */
export const splitNode = {
  name: "split",
  nodeType: NodeType.SPLIT,
  form: { label: "Split", summary: "Splits a PDF or multi-page TIFF into parts, one child run per part." },
  check: checkSplitSettings,
} as const satisfies NodeDefinition<"split">;
