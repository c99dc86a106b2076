import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";

/** Runs in these states still change: their pages refresh until they leave them. */
export const isInProgress = (status: RunStatus) => status === RunStatus.QUEUED || status === RunStatus.RUNNING || status === RunStatus.AWAITING_CHILDREN;

export const RUN_STATUS_TONES = {
  [RunStatus.UNSPECIFIED]: "neutral",
  [RunStatus.QUEUED]: "neutral",
  [RunStatus.RUNNING]: "warn",
  [RunStatus.COMPLETED]: "good",
  [RunStatus.FAILED]: "bad",
  [RunStatus.CANCELLED]: "neutral",
  [RunStatus.REVIEW]: "warn",
  [RunStatus.AWAITING_CHILDREN]: "warn",
} as const;

/** How often pages with runs in progress ask again. */
export const REFRESH_MS = 1000;
