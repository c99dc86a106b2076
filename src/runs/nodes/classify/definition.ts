import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { classifyForm } from "./form.ts";
import { checkClassifySettings } from "./settings.ts";

/** The classify node. */
export const classifyNode = {
  name: "classify",
  nodeType: NodeType.CLASSIFY,
  instant: true,
  form: classifyForm,
  check: checkClassifySettings,
  parseSource: (settings) => settings.source,
} as const satisfies NodeDefinition<"classify">;
