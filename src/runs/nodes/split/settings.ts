import type { SplitNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { MAX_AT_TEXT_LENGTH, parseRanges } from "../../../documents/split/split-plan.ts";
import { settingsInvalid } from "../settings.ts";

/** A page count no real document reaches; bounds pages_per_part. */
const MAX_PAGES_PER_PART = 100_000;

/** Exactly one way to cut, within its bounds. */
export function checkSplitSettings(split: SplitNode, path: string): void {
  const set = [split.pagesPerPart !== 0, split.ranges !== "", split.atText !== ""].filter(Boolean).length;
  if (set !== 1) throw settingsInvalid(path, "set exactly one of pages_per_part, ranges and at_text");
  if (split.pagesPerPart < 0 || split.pagesPerPart > MAX_PAGES_PER_PART) {
    throw settingsInvalid(`${path}.pages_per_part`, `must be from 1 to ${MAX_PAGES_PER_PART}`);
  }
  if (split.ranges !== "") {
    const ranges = parseRanges(split.ranges);
    if (typeof ranges === "string") throw settingsInvalid(`${path}.ranges`, ranges);
  }
  if (split.atText !== "" && (split.atText.trim() === "" || split.atText.length > MAX_AT_TEXT_LENGTH)) {
    throw settingsInvalid(`${path}.at_text`, `must be 1 to ${MAX_AT_TEXT_LENGTH} characters, not only spaces`);
  }
}
