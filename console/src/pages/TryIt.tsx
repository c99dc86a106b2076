import { useMutation, useQuery } from "@connectrpc/connect-query";
import { useEffect, useState } from "react";
import { PipeService } from "../../../gen/docpipe/v1/pipe_service_pb.js";
import { updatePipe } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { type Run, RunStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { getRun, listRuns } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { Badge, ErrorNotice, Field } from "../components.tsx";
import { enumLabel, formatTime, shortFileName } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { isInProgress, REFRESH_MS, RUN_STATUS_TONES } from "../run-status.ts";
import { consoleHeaders } from "../transport.ts";

/** The saved pipe a canvas edits, when it has been saved: what a test document is sent to. */
export interface TryTarget {
  org: string;
  pipeId: string;
  testMode: boolean;
  /** Whether the caller may change the pipe (send test documents, turn test mode on). */
  mayChange: boolean;
}

/** Sends a file to the pipe in test mode (`POST /test-runs/…`); the new run's id, or the service's refusal as an Error. */
async function sendTestDocument(org: string, pipeId: string, file: File): Promise<string> {
  const response = await fetch(`/test-runs/${encodeURIComponent(org)}/${encodeURIComponent(pipeId)}`, {
    method: "POST",
    headers: { ...consoleHeaders(), "content-type": file.type || "application/octet-stream", "x-file-name": encodeURIComponent(file.name) },
    body: file,
  });
  const answer = (await response.json()) as { runId?: string; message?: string; reason?: string };
  if (!response.ok || answer.runId === undefined) throw new Error(`${answer.message ?? `HTTP ${response.status}`} (${answer.reason ?? response.status})`);
  return answer.runId;
}

/**
 * "Test with a document" and the run shown on the canvas: a file sent to the saved pipe in test
 * mode (nodes that reach outside record what they would send), or any earlier run of the pipe. The
 * chosen run is read again while it goes on; `onRun` gets it each time (undefined: sample data).
 */
export function TryIt({ target, onRun }: { target: TryTarget; onRun: (run: Run | undefined) => void }) {
  const { org, pipeId } = target;
  const [runId, setRunId] = useState("");
  const [file, setFile] = useState<File | undefined>(undefined);
  const [sending, setSending] = useState(false);
  const [sendError, setSendError] = useState<string | undefined>(undefined);
  const invalidate = useInvalidate(PipeService);
  const testMode = useMutation(updatePipe, { onSuccess: () => invalidate() });
  const runs = useQuery(
    listRuns,
    { organizationId: org, pipeId, pageSize: 20 },
    { refetchInterval: (query) => (query.state.data?.runs.some((each) => isInProgress(each.status)) ? REFRESH_MS : false) },
  );
  const chosen = useQuery(
    getRun,
    { organizationId: org, runId },
    {
      enabled: runId !== "",
      refetchInterval: (query) => {
        const current = query.state.data?.run;
        return current && isInProgress(current.status) ? REFRESH_MS : false;
      },
    },
  );
  const run = runId === "" ? undefined : chosen.data?.run;
  useEffect(() => onRun(run), [run, onRun]);

  const send = async () => {
    if (file === undefined) return;
    setSending(true);
    setSendError(undefined);
    try {
      setRunId(await sendTestDocument(org, pipeId, file));
      void runs.refetch();
    } catch (error) {
      setSendError((error as Error).message);
    } finally {
      setSending(false);
    }
  };

  const listed = runs.data?.runs ?? [];
  return (
    <section className="try-it" aria-labelledby="try-it-title">
      <h3 id="try-it-title">Try it</h3>
      {target.mayChange
        && (target.testMode ? (
          <div className="inline-form">
            <Field
              label="Test with a document"
              hint="Sent to the saved pipeline in test mode: callbacks, HTTP requests and emails record what they would send."
            >
              {(control) => <input {...control} type="file" onChange={(event) => setFile(event.target.files?.[0])} />}
            </Field>
            <button type="button" className="primary" disabled={file === undefined || sending} onClick={() => void send()}>
              {sending ? "Sending…" : "Test"}
            </button>
          </div>
        ) : (
          <p className="notice">
            Test mode is off: this pipe's callbacks, HTTP requests and emails would send.{" "}
            <button type="button" disabled={testMode.isPending} onClick={() => testMode.mutate({ organizationId: org, pipeId, testMode: true })}>
              Turn test mode on to test with a document
            </button>
          </p>
        ))}
      {sendError !== undefined && (
        <p className="notice error" role="alert">
          The document was not sent: {sendError}
        </p>
      )}
      <ErrorNotice error={testMode.error ?? runs.error ?? chosen.error} />
      <div className="inline-form">
        <Field label="Run data" hint="The run shown on the canvas, and the data expressions are completed from and tried against.">
          {(control) => (
            <select {...control} value={runId} onChange={(event) => setRunId(event.target.value)}>
              <option value="">Sample data shaped as the pipeline writes it</option>
              {runId !== "" && !listed.some((each) => each.id === runId) && <option value={runId}>Run {runId.slice(0, 8)}</option>}
              {listed.map((each) => (
                <option key={each.id} value={each.id}>
                  {`${formatTime(each.createTime)} · ${shortFileName(each.file?.name ?? "")} · ${enumLabel(RunStatus, each.status)}`}
                </option>
              ))}
            </select>
          )}
        </Field>
        {run !== undefined && <Badge tone={RUN_STATUS_TONES[run.status]}>{enumLabel(RunStatus, run.status)}</Badge>}
      </div>
      {run !== undefined && run.error !== "" && <p className="notice error">{run.error}</p>}
    </section>
  );
}
