import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkChunkSettings } from "./settings.ts";

/** The chunk node. */
export const chunkNode = {
  name: "chunk",
  nodeType: NodeType.CHUNK,
  instant: true,
  form: { label: "Chunk", summary: "Splits the elements of the parse before it into chunks for retrieval." },
  check: checkChunkSettings,
} as const satisfies NodeDefinition<"chunk">;
