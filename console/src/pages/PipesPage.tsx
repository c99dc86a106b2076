import { useInfiniteQuery } from "@connectrpc/connect-query";
import { PipeState } from "../../../gen/docpipe/v1/pipe_pb.js";
import { listPipes } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import type { Workspace } from "../../../gen/docpipe/v1/workspace_pb.js";
import { Badge, EmptyState, ErrorNotice, LoadMore, TableBox } from "../components.tsx";
import { enumLabel, formatTime } from "../format.ts";
import { routeHash } from "../route.ts";

export const PIPE_STATE_TONES = { [PipeState.ACTIVE]: "good", [PipeState.PAUSED]: "warn", [PipeState.UNSPECIFIED]: "neutral" } as const;

/** The pipes of the chosen workspace (or all), with their state and what their trigger accepts. */
export function PipesPage({ org, workspaceId, workspaces }: { org: string; workspaceId: string; workspaces: Workspace[] }) {
  const query = useInfiniteQuery(
    listPipes,
    { organizationId: org, workspaceId, pageSize: 100, pageToken: "" },
    { pageParamKey: "pageToken", getNextPageParam: (page) => page.nextPageToken || undefined },
  );
  const pipes = { error: query.error, data: query.data && { pipes: query.data.pages.flatMap((page) => page.pipes) } };
  const workspaceName = (id: string) => workspaces.find((workspace) => workspace.id === id)?.name ?? "";
  return (
    <section aria-labelledby="pipes-title">
      <div className="page-head">
        <h1 id="pipes-title">Pipes</h1>
        <a className="button primary" href={routeHash({ page: "pipe", org, pipeId: "new" })}>
          New pipe
        </a>
      </div>
      <ErrorNotice error={pipes.error} />
      {pipes.data?.pipes.length === 0 && <EmptyState>No pipes here yet. Create one with New pipe: choose the formats it accepts, then activate it.</EmptyState>}
      {pipes.data && pipes.data.pipes.length > 0 && (
        <TableBox label="Pipes">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Workspace</th>
                <th scope="col">Accepts</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {pipes.data.pipes.map((pipe) => {
                const trigger = pipe.pipeline?.nodes[0]?.kind;
                return (
                  <tr key={pipe.id}>
                    <th scope="row">
                      <a href={routeHash({ page: "pipe", org, pipeId: pipe.id })}>{pipe.name}</a>
                    </th>
                    <td>
                      <Badge tone={PIPE_STATE_TONES[pipe.state]}>{enumLabel(PipeState, pipe.state)}</Badge>
                    </td>
                    <td>{workspaceName(pipe.workspaceId)}</td>
                    <td>{trigger?.case === "httpTrigger" ? `${trigger.value.acceptedFormats.join(", ")} · up to ${trigger.value.maxSizeMb} MB` : ""}</td>
                    <td>{formatTime(pipe.updateTime)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
      <LoadMore query={query} />
    </section>
  );
}
