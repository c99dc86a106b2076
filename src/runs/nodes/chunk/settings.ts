import { type ChunkNode, ChunkStrategySchema } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { DEFAULT_MAX_CHARACTERS, MAX_MAX_CHARACTERS } from "../../../documents/chunk/chunk-step.ts";
import { settingsInvalid } from "../settings.ts";

/** A known strategy; sizes within their bounds. */
export function checkChunkSettings(chunk: ChunkNode, path: string): void {
  if (!ChunkStrategySchema.values.some((known) => known.number === chunk.strategy))
    throw settingsInvalid(`${path}.strategy`, "must be CHUNK_STRATEGY_BY_TITLE or CHUNK_STRATEGY_BY_SIZE");
  if (chunk.maxCharacters < 0 || chunk.maxCharacters > MAX_MAX_CHARACTERS)
    throw settingsInvalid(`${path}.max_characters`, `must be from 1 to ${MAX_MAX_CHARACTERS} (0 means ${DEFAULT_MAX_CHARACTERS})`);
  const max = chunk.maxCharacters === 0 ? DEFAULT_MAX_CHARACTERS : chunk.maxCharacters;
  if (chunk.overlapCharacters < 0 || chunk.overlapCharacters > max / 2)
    throw settingsInvalid(`${path}.overlap_characters`, "must be from 0 to half of max_characters");
}
