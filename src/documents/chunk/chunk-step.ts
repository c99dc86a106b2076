import { type ChunkNode, ChunkStrategy } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { Element } from "../parse/elements/element.ts";
import { type Chunk, type ChunkOptions, chunkElements } from "./chunk.ts";

/** A chunk node's max_characters when it is 0, and the most it may be. */
export const DEFAULT_MAX_CHARACTERS = 1500;
export const MAX_MAX_CHARACTERS = 100_000;

/** The chunk node's settings with their defaults. */
export function chunkOptions(node: ChunkNode): ChunkOptions {
  return {
    strategy: node.strategy === ChunkStrategy.BY_SIZE ? "by_size" : "by_title",
    maxCharacters: node.maxCharacters === 0 ? DEFAULT_MAX_CHARACTERS : node.maxCharacters,
    overlapCharacters: node.overlapCharacters,
  };
}

/** A chunk step's output: the chunks of `parsed`'s elements (the output of the latest parse before it). Throws when there is none. */
export function chunkStep(node: ChunkNode, parsed: unknown): { chunks: Chunk[] } {
  if (!hasElements(parsed)) throw new Error("a chunk node needs a parse node before it that returned elements");
  return { chunks: chunkElements(parsed.elements, chunkOptions(node)) };
}

function hasElements(output: unknown): output is { elements: Element[] } {
  return typeof output === "object" && output !== null && Array.isArray((output as { elements?: unknown }).elements);
}
