import { type JsonObject, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useMutation, useQuery } from "@connectrpc/connect-query";
import { NodeType, RunStatus, type RunStep, StepStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { cancelRun, getRun, rerunRun } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { Badge, ErrorNotice } from "../components.tsx";
import { enumLabel, formatBytes, formatDuration, formatTime } from "../format.ts";
import { routeHash } from "../route.ts";
import { isInProgress, REFRESH_MS, RUN_STATUS_TONES } from "../run-status.ts";
import { hasPendingDelivery, RunDeliveries } from "./RunDeliveries.tsx";
import { RunService } from "../../../gen/docpipe/v1/run_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { ParseElements } from "./ParseElements.tsx";
import { usePermissions } from "../permissions.ts";

const STEP_TONES = {
  [StepStatus.UNSPECIFIED]: "neutral",
  [StepStatus.RUNNING]: "warn",
  [StepStatus.COMPLETED]: "good",
  [StepStatus.FAILED]: "bad",
  [StepStatus.WAITING]: "warn",
} as const;

/** One run: its file, its times, each step's outcome and its callbacks; refreshes until the run and its deliveries settle. */
export function RunPage({ org, runId }: { org: string; runId: string }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(RunService);
  const result = useQuery(
    getRun,
    { organizationId: org, runId },
    {
      refetchInterval: (query) => {
        const current = query.state.data?.run;
        return current && (isInProgress(current.status) || hasPendingDelivery(current)) ? REFRESH_MS : false;
      },
    },
  );
  const cancel = useMutation(cancelRun, { onSuccess: () => invalidate() });
  // A rerun is a new run: its page is where its progress shows.
  const rerun = useMutation(rerunRun, {
    onSuccess: (response) => {
      if (response.run) window.location.hash = routeHash({ page: "run", org, runId: response.run.id });
    },
  });
  const run = result.data?.run;
  if (result.error) return <ErrorNotice error={result.error} />;
  if (run === undefined) return <p className="loading">Loading…</p>;
  const file = run.file;

  return (
    <section aria-labelledby="run-title">
      <p>
        <a href={routeHash({ page: "runs", org, pipeId: run.pipeId, status: RunStatus.UNSPECIFIED })}>← Runs of this pipe</a>
      </p>
      <div className="page-head">
        <h1 id="run-title">Run of {file?.name ?? "a document"}</h1>
        <Badge tone={RUN_STATUS_TONES[run.status]}>{enumLabel(RunStatus, run.status)}</Badge>
        {may("runs.write") && isInProgress(run.status) && (
          <button type="button" onClick={() => cancel.mutate({ organizationId: org, runId })} disabled={cancel.isPending}>
            Cancel run
          </button>
        )}
        {/* RerunRun takes an ended run that is not a split's part (FailedPrecondition otherwise). */}
        {may("runs.write") && !isInProgress(run.status) && run.status !== RunStatus.REVIEW && run.parentRunId === "" && (
          <button type="button" onClick={() => rerun.mutate({ organizationId: org, runId })} disabled={rerun.isPending}>
            Rerun
          </button>
        )}
      </div>
      <ErrorNotice error={cancel.error} />
      <ErrorNotice error={rerun.error} />
      {run.parentRunId && (
        <p>
          Part {run.partIndex + 1} ({run.partLabel}) of <a href={routeHash({ page: "run", org, runId: run.parentRunId })}>the run that split it</a>
        </p>
      )}
      {run.rerunOfRunId && (
        <p>
          Rerun of <a href={routeHash({ page: "run", org, runId: run.rerunOfRunId })}>an earlier run</a>
        </p>
      )}
      {run.error && (
        <p className="notice error" role="alert">
          {run.error}
        </p>
      )}
      <div className="cards">
        <dl className="card facts">
          <dt>File</dt>
          <dd>{file?.name}</dd>
          <dt>Format</dt>
          <dd>
            {file?.format} <span className="muted">({file?.contentType})</span>
          </dd>
          <dt>Size</dt>
          <dd>
            {formatBytes(file?.size ?? 0n)} <span className="muted">({String(file?.size ?? 0n)} bytes)</span>
          </dd>
          <dt>SHA-256</dt>
          <dd>
            <code className="wrap">{file?.sha256}</code>
          </dd>
        </dl>
        <dl className="card facts">
          <dt>Run</dt>
          <dd>
            <code className="wrap">{run.id}</code>
          </dd>
          <dt>Created</dt>
          <dd>{formatTime(run.createTime)}</dd>
          <dt>Started</dt>
          <dd>{formatTime(run.startTime) || "Not yet"}</dd>
          <dt>Ended</dt>
          <dd>{formatTime(run.endTime) || "Not yet"}</dd>
          <dt>Pipeline version</dt>
          <dd>{run.pipelineVersion}</dd>
        </dl>
      </div>
      <h2>Steps</h2>
      {run.steps.length === 0 && <p className="muted">No step has started yet.</p>}
      <ol className="steps">
        {run.steps.map((step) => (
          <Step key={step.nodeId} step={step} />
        ))}
      </ol>
      <RunDeliveries org={org} run={run} />
    </section>
  );
}

function Step({ step }: { step: RunStep }) {
  const duration = formatDuration(step.startTime, step.endTime);
  return (
    <li className="card">
      <div className="page-head">
        <h3>
          {step.nodeId} <span className="muted">({enumLabel(NodeType, step.nodeType).toLowerCase()})</span>
        </h3>
        <Badge tone={STEP_TONES[step.status]}>{enumLabel(StepStatus, step.status)}</Badge>
        {duration && <span className="muted">{duration}</span>}
      </div>
      {step.copiedFromRunId && <p className="muted">Copied by the rerun from run {step.copiedFromRunId}, where it ran at these times.</p>}
      {step.error && <p className="notice error">{step.error}</p>}
      {step.output?.testMode === true && (
        <p className="notice">Test mode: nothing was sent. The output shows the request this step would have sent, secrets masked.</p>
      )}
      {step.output && <StepOutput output={step.output} />}
      {step.outputValue && (
        <details open>
          <summary>Output</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <pre className="scroll" tabIndex={0}>
            {JSON.stringify(toJson(ValueSchema, step.outputValue), null, 2)}
          </pre>
        </details>
      )}
    </li>
  );
}

/**
 * A step's output: a parse step's long text, elements (as a table) and Markdown collapsed, the rest
 * as JSON; each scrolls when long.
 */
function StepOutput({ output }: { output: JsonObject }) {
  const { text, elements, markdown, ...rest } = output;
  return (
    <>
      {Array.isArray(elements) && <ParseElements elements={elements} />}
      {typeof markdown === "string" && (
        <details>
          <summary>Markdown</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <pre className="scroll" tabIndex={0}>
            {markdown}
          </pre>
        </details>
      )}
      {typeof text === "string" && (
        <details>
          <summary>Text ({text.length.toLocaleString("en")} characters)</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <pre className="scroll" tabIndex={0}>
            {text}
          </pre>
        </details>
      )}
      {Object.keys(rest).length > 0 && (
        <details open={typeof text !== "string"}>
          <summary>Output</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable, or keyboard users cannot scroll it (axe: scrollable-region-focusable). */}
          <pre className="scroll" tabIndex={0}>
            {JSON.stringify(rest, null, 2)}
          </pre>
        </details>
      )}
    </>
  );
}
