import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { typedExtractCorrection } from "./corrections.ts";
import { extractForm } from "./form.ts";
import { checkExtractSettings } from "./settings.ts";

/** The extract node. */
export const extractNode = {
  name: "extract",
  nodeType: NodeType.EXTRACT,
  instant: true,
  form: extractForm,
  check: checkExtractSettings,
  parseSource: (settings) => settings.source,
  typedCorrection: typedExtractCorrection,
} as const satisfies NodeDefinition<"extract">;
