import { ReviewDecisionSchema, type ReviewNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkCondition, settingsInvalid } from "../settings.ts";

/** A review waits at most a year for its decision. */
const MAX_REVIEW_TIMEOUT_HOURS = 24 * 366;

/** A condition that compiles, a timeout within a year and a known timeout decision. */
export function checkReviewSettings(review: ReviewNode, path: string): void {
  if (review.when !== "") checkCondition(review.when, `${path}.when`);
  if (review.timeoutHours < 0 || review.timeoutHours > MAX_REVIEW_TIMEOUT_HOURS) {
    throw settingsInvalid(`${path}.timeout_hours`, `must be from 0 (no timeout) to ${MAX_REVIEW_TIMEOUT_HOURS}`);
  }
  if (!ReviewDecisionSchema.values.some((known) => known.number === review.timeoutDecision)) {
    throw settingsInvalid(`${path}.timeout_decision`, "must be REVIEW_DECISION_APPROVE or REVIEW_DECISION_REJECT");
  }
}
