import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { chunkForm } from "./form.ts";
import { checkChunkSettings } from "./settings.ts";

/** The chunk node. */
export const chunkNode = {
  name: "chunk",
  nodeType: NodeType.CHUNK,
  instant: true,
  needsParse: "a chunk node cuts a parse node's elements",
  form: chunkForm,
  check: checkChunkSettings,
} as const satisfies NodeDefinition<"chunk">;
