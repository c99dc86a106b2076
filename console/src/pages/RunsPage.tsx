import { useQuery } from "@connectrpc/connect-query";
import { listPipes } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { RunStatus } from "../../../gen/docpipe/v1/run_pb.js";
import { listRuns } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { Badge, DataTable, ErrorNotice, LoadMore } from "../components.tsx";
import { enumLabel, formatBytes, formatDuration, formatTime } from "../format.ts";
import { usePagedList } from "../paged-list.ts";
import { type Route, routeHash } from "../route.ts";
import { isInProgress, REFRESH_MS, RUN_STATUS_TONES } from "../run-status.ts";

const STATUSES = [
  RunStatus.QUEUED,
  RunStatus.RUNNING,
  RunStatus.REVIEW,
  RunStatus.AWAITING_CHILDREN,
  RunStatus.COMPLETED,
  RunStatus.FAILED,
  RunStatus.CANCELLED,
];

/** Runs newest first, filtered by pipe and status (kept in the address); refreshes while any is queued or running. */
export function RunsPage({ route, workspaceId }: { route: Extract<Route, { page: "runs" }>; workspaceId: string }) {
  const { org, pipeId, status } = route;
  const pipes = useQuery(listPipes, { organizationId: org, workspaceId, pageSize: 100 });
  const runs = usePagedList(listRuns, { organizationId: org, workspaceId, pipeId, status, pageSize: 50 }, (page) => page.runs, {
    refetchInterval: (loaded) => (loaded.some((run) => isInProgress(run.status)) ? REFRESH_MS : false),
  });
  const pipeName = (id: string) => (pipes.data === undefined ? "" : (pipes.data.pipes.find((pipe) => pipe.id === id)?.name ?? "Deleted pipe"));
  const refreshing = runs.items?.some((run) => isInProgress(run.status)) ?? false;

  return (
    <section aria-labelledby="runs-title">
      <div className="page-head">
        <h1 id="runs-title">Runs</h1>
        <span role="status" className="muted">
          {refreshing ? "Refreshing while runs are in progress…" : ""}
        </span>
      </div>
      <div className="filters">
        <label>
          <span>Pipe</span>
          <select value={pipeId} onChange={(event) => location.assign(routeHash({ ...route, pipeId: event.target.value }))}>
            <option value="">All pipes</option>
            {pipes.data?.pipes.map((pipe) => (
              <option key={pipe.id} value={pipe.id}>
                {pipe.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Status</span>
          <select value={status} onChange={(event) => location.assign(routeHash({ ...route, status: Number(event.target.value) as RunStatus }))}>
            <option value={RunStatus.UNSPECIFIED}>Any status</option>
            {STATUSES.map((candidate) => (
              <option key={candidate} value={candidate}>
                {enumLabel(RunStatus, candidate)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNotice error={runs.error} />
      <DataTable
        label="Runs"
        rows={runs.items}
        rowKey={(run) => run.id}
        empty="No runs match. A run starts when a program submits a document to an active pipe's trigger URL (see the pipe's page)."
        columns={[
          {
            header: "Created",
            rowHeader: true,
            className: "time",
            cell: (run) => <a href={routeHash({ page: "run", org, runId: run.id })}>{formatTime(run.createTime)}</a>,
          },
          { header: "Pipe", cell: (run) => pipeName(run.pipeId) },
          {
            header: "File",
            className: "file-name",
            cell: (run) => (
              <>
                {run.file?.name}{" "}
                <span className="muted">
                  ({run.file?.format}, {formatBytes(run.file?.size ?? 0n)})
                </span>
              </>
            ),
          },
          { header: "Status", cell: (run) => <Badge tone={RUN_STATUS_TONES[run.status]}>{enumLabel(RunStatus, run.status)}</Badge> },
          { header: "Duration", cell: (run) => formatDuration(run.startTime, run.endTime) },
        ]}
      />
      <LoadMore query={runs.query} />
    </section>
  );
}
