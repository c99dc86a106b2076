import type { DedupeNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compileExpression } from "../../sandbox/expressions.ts";
import { requireText, settingsInvalid } from "../settings.ts";

/** The longest a dedupe node remembers a key: ten years. */
const MAX_WITHIN_DAYS = 3650;

/** The key expression is set and compiles; the days are within their bounds. */
export function checkDedupeSettings(dedupe: DedupeNode, path: string): void {
  requireText(dedupe.key, `${path}.key`, "an expression");
  compileExpression(dedupe.key, `${path}.key`);
  if (dedupe.withinDays < 1 || dedupe.withinDays > MAX_WITHIN_DAYS) throw settingsInvalid(`${path}.within_days`, `must be from 1 to ${MAX_WITHIN_DAYS}`);
}
