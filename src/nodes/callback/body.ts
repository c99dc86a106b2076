import type { CallbackNode } from "../../../gen/docpipe/v1/pipe_pb.js";
import { MASKED, previewUrl } from "../../callbacks/preview-url.ts";
import { SIGNATURE_HEADER } from "../../callbacks/signature.ts";
import { CALLBACK_METHODS } from "../../deliveries/enqueue-callback.ts";
import type { RunState } from "../../worker/node-executor.ts";

/**
 * The callback payload: what the run produced, or why it failed; a child run also names its parent
 * and part. Its status comes before its data and its error last: a failing run's end rewrites a body
 * written before the failure on its text (see deliveriesFailedWithRunEnd).
 */
export function callbackBody(state: Pick<RunState, "run" | "file" | "data" | "failure">, completedAt: Date): string {
  const { run } = state;
  return JSON.stringify({
    runId: run.id,
    pipeId: run.pipe_id,
    ...(run.parent_run_id === null ? {} : { parentRunId: run.parent_run_id, partIndex: run.part_index, partLabel: run.part_label }),
    status: state.failure === undefined ? "Completed" : "Failed",
    fileName: state.file.name,
    data: state.data,
    completedAt: completedAt.toISOString(),
    ...(state.failure === undefined ? {} : { error: state.failure }),
  });
}

/**
 * A callback body as the run's failure makes it: one that says "Completed" (its callback ran before
 * the failure) says "Failed" and carries `error`, its data and completedAt as they were.
 */
export function failedCallbackBody(body: string, error: string): string {
  const payload = JSON.parse(body) as Record<string, unknown>;
  return payload.status === "Completed" ? JSON.stringify({ ...payload, status: "Failed", error }) : body;
}

/**
 * In test mode a callback sends nothing: its output is the request it would have sent. Header
 * values are masked (they are sealed because they often carry tokens), and so is the signature.
 */
export async function previewCallback(state: RunState, callback: CallbackNode): Promise<unknown> {
  return {
    testMode: true,
    sent: false,
    request: {
      method: CALLBACK_METHODS[callback.method] ?? "POST",
      url: previewUrl(callback.url),
      headers: {
        ...Object.fromEntries(Object.keys(callback.headers).map((name) => [name, MASKED])),
        "content-type": "application/json",
        [SIGNATURE_HEADER]: `t=${Math.floor(Date.now() / 1000)},v1=${MASKED}`,
      },
      body: JSON.parse(callbackBody(state, new Date())),
    },
  };
}
