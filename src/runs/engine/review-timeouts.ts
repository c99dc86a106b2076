import type { Db } from "../../data/db/schema.ts";
import { timedOutReviewResult, type WaitingReview } from "../pipes/review-decision.ts";
import { decideReview, expiredReviews } from "../../data/repositories/run-steps.ts";

/** Expired reviews decided per sweep; the next sweep takes the rest. */
const BATCH = 100;

/**
 * Takes the configured decision for every review whose timeout has passed, as ResolveReview would
 * (reviewer "timeout"); the runs go back to the queue. Returns how many were decided.
 */
export async function decideExpiredReviews(db: Db, now: Date): Promise<number> {
  let decided = 0;
  for (const expired of await expiredReviews(db, now, BATCH)) {
    if (await decideReview(db, expired.run_id, expired.position, timedOutReviewResult(expired.output as WaitingReview, now))) decided++;
  }
  return decided;
}
