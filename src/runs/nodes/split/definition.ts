import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { splitForm } from "./form.ts";
import { checkSplitSettings } from "./settings.ts";

/** The split node. */
export const splitNode = {
  name: "split",
  nodeType: NodeType.SPLIT,
  splits: true,
  form: splitForm,
  check: checkSplitSettings,
} as const satisfies NodeDefinition<"split">;
