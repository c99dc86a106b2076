import { type ChunkNode, ChunkStrategy } from "../../gen/docpipe/v1/pipe_pb.js";
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

/**
 * A chunk step's output: the chunks of the elements of the latest parse before it, found among the
 * run's outputs so far (in the order they were made). Throws when no parse came before.
 */
export function chunkStep(node: ChunkNode, outputs: Readonly<Record<string, unknown>>): { chunks: Chunk[] } {
  const parsed = Object.values(outputs).findLast(
    (output): output is { elements: Element[] } => typeof output === "object" && output !== null && Array.isArray((output as { elements?: unknown }).elements),
  );
  if (parsed === undefined) throw new Error("a chunk node needs a parse node before it that returned elements");
  return { chunks: chunkElements(parsed.elements, chunkOptions(node)) };
}
