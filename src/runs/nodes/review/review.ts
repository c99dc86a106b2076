import { ReviewDecision } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { type NodeExecutor, Waiting } from "../node-executor.ts";
import { conditionHolds } from "../../sandbox/expressions.ts";
import { nodeContext } from "../run-document.ts";

/** Code of a review step a reviewer (or its timeout) rejected. */
export const REVIEW_REJECTED = "review_rejected";

/**
 * A review step's output: whether the review was required and, once decided, the decision; an
 * approving reviewer's corrected run data is its `data`.
 */
export interface ReviewOutput {
  required: boolean;
  data?: Record<string, unknown>;
  [member: string]: unknown;
}

/**
 * A review stops the run when its condition holds (always when it has none). The waiting step keeps
 * the run data as the reviewer sees it, and when the review expires with which decision.
 */
export const executeReview: NodeExecutor<"review", ReviewOutput> = async (node, data, step) => {
  const { when, timeoutHours, timeoutDecision } = node.kind.value;
  if (when !== "" && !(await conditionHolds(when, "when", data, nodeContext(step)))) return { required: false };
  return new Waiting({
    required: true,
    data,
    ...(timeoutHours > 0
      ? {
          expireTime: new Date(Date.now() + timeoutHours * 3_600_000).toISOString(),
          timeoutDecision: timeoutDecision === ReviewDecision.APPROVE ? "approve" : "reject",
        }
      : {}),
  });
};
