import type { Db } from "../db/schema.ts";
import { reviewStepResult } from "../pipes/review-decision.ts";
import { decideReview, expiredReviews } from "../repositories/run-steps.ts";

/** Expired reviews decided per sweep; the next sweep takes the rest. */
const BATCH = 100;

/** What a waiting review step records about its timeout (see nodes/review.ts). */
interface WaitingReview {
  data?: Record<string, unknown>;
  expireTime?: string;
  timeoutDecision?: "approve" | "reject";
}

/**
 * Takes the configured decision for every review whose timeout has passed, as ResolveReview would
 * (reviewer "timeout"); the runs go back to the queue. Returns how many were decided.
 */
export async function decideExpiredReviews(db: Db, now: Date): Promise<number> {
  let decided = 0;
  for (const expired of await expiredReviews(db, now, BATCH)) {
    const waiting = expired.output as WaitingReview;
    const decision = waiting.timeoutDecision === "approve" ? "approve" : "reject";
    const result = reviewStepResult(waiting.data ?? {}, {
      decision,
      reviewer: "timeout",
      comment: `no decision before ${waiting.expireTime}`,
      decideTime: now,
    });
    if (await decideReview(db, expired.run_id, expired.position, result)) decided++;
  }
  return decided;
}
