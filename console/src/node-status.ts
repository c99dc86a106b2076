import { type Run, RunStatus, StepStatus } from "../../gen/docpipe/v1/run_pb.js";
import { isInProgress } from "./run-status.ts";

/** Where a run is at one node of its pipeline, as the canvas shows it. */
export type NodeRunStatus = "queued" | "running" | "succeeded" | "failed" | "skipped" | "waiting";

const STEP_STATUSES: Record<StepStatus, NodeRunStatus> = {
  [StepStatus.UNSPECIFIED]: "queued",
  [StepStatus.RUNNING]: "running",
  [StepStatus.COMPLETED]: "succeeded",
  [StepStatus.FAILED]: "failed",
  [StepStatus.WAITING]: "waiting",
};

/**
 * Each node's status in `run`, from its last step; a node without a step is still queued while the
 * run goes on, and was skipped (a branch not taken, or after a failure) once it has ended.
 */
export function nodeStatus(run: Run, nodeId: string): NodeRunStatus {
  const step = run.steps.findLast((candidate) => candidate.nodeId === nodeId);
  if (step !== undefined) return STEP_STATUSES[step.status];
  return isInProgress(run.status) || run.status === RunStatus.REVIEW ? "queued" : "skipped";
}
