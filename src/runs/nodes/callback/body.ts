import type { RunData } from "../run-data.ts";
import type { ClaimedRun } from "../../../data/repositories/run-leases.ts";

/** What a callback reports of its run. */
export interface CallbackRun {
  run: Pick<ClaimedRun, "id" | "pipe_id" | "parent_run_id" | "part_index" | "part_label">;
  fileName: string;
  data: RunData;
  /** The run's error, once it has failed. */
  failure?: string | undefined;
}

/**
 * The callback payload: what the run produced, or why it failed; a child run also names its parent
 * and part.
 */
export function callbackBody({ run, fileName, data, failure }: CallbackRun, completedAt: Date): string {
  return JSON.stringify({
    runId: run.id,
    pipeId: run.pipe_id,
    ...(run.parent_run_id === null ? {} : { parentRunId: run.parent_run_id, partIndex: run.part_index, partLabel: run.part_label }),
    status: failure === undefined ? "Completed" : "Failed",
    fileName,
    data,
    completedAt: completedAt.toISOString(),
    ...(failure === undefined ? {} : { error: failure }),
  });
}

/**
 * A callback body as the run's failure makes it: one that says "Completed" (its callback ran before
 * the failure) says "Failed" and carries `error`, its data and completedAt as they were. Any other
 * body (one that says "Failed" already, or is not a payload) stays as it is.
 */
export function failedCallbackBody(body: string, error: string): string {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof payload !== "object" || payload === null || (payload as { status?: unknown }).status !== "Completed") return body;
  return JSON.stringify({ ...payload, status: "Failed", error });
}
