import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { parseForm } from "./form.ts";
import { checkParseSettings } from "./settings.ts";

/** The parse node. */
export const parseNode = {
  name: "parse",
  nodeType: NodeType.PARSE,
  passesOnParse: true,
  parses: true,
  form: parseForm,
  check: checkParseSettings,
} as const satisfies NodeDefinition<"parse">;
