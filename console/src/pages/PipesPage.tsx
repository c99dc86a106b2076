import { fromJson } from "@bufbuild/protobuf";
import { useMutation } from "@connectrpc/connect-query";
import { PipelineSchema, PipeState } from "../../../gen/docpipe/v1/pipe_pb.js";
import { createPipe, listPipes } from "../../../gen/docpipe/v1/pipe_service-PipeService_connectquery.js";
import { PipeService } from "../../../gen/docpipe/v1/pipe_service_pb.js";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../../src/runs/pipes/invoices-example.ts";
import type { Workspace } from "../../../gen/docpipe/v1/workspace_pb.js";
import { Badge, DataTable, ErrorNotice, LoadMore } from "../components.tsx";
import { enumLabel, formatTime } from "../format.ts";
import { useInvalidate } from "../invalidate.ts";
import { usePagedList } from "../paged-list.ts";
import { PIPE_STATE_TONES } from "../pipe-states.ts";
import { routeHash } from "../route.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";

/** The pipes of the chosen workspace (or all), with their state and what their trigger accepts. */
export function PipesPage({ org, workspaceId, workspaces }: { org: string; workspaceId: string; workspaces: Workspace[] }) {
  const may = usePermissions(org);
  const pipes = usePagedList(listPipes, { organizationId: org, workspaceId, pageSize: 100 }, (page) => page.pipes);
  const workspaceName = (id: string) => workspaces.find((workspace) => workspace.id === id)?.name ?? "";
  const invalidate = useInvalidate(PipeService);
  // The worked example of docs/pipelines.md, as a draft to adapt (its callback URLs are placeholders).
  const example = useMutation(createPipe, {
    onSuccess: (response) => {
      void invalidate();
      location.assign(routeHash({ page: "pipe", org, pipeId: response.pipe!.id }));
    },
  });
  const createExample = useSingleFlight(() =>
    example.mutateAsync({
      organizationId: org,
      workspaceId: workspaceId || (workspaces.find((workspace) => workspace.isDefault)?.id ?? ""),
      name: "invoices (example)",
      description: "Invoices by email: parse, classify, extract, validate, review when invalid, callback. See docs/pipelines.md.",
      pipeline: fromJson(PipelineSchema, invoicesExample(INVOICES_EXAMPLE_DEFAULTS)),
    }),
  );
  return (
    <section aria-labelledby="pipes-title">
      <div className="page-head">
        <h1 id="pipes-title">Pipes</h1>
        {may("pipes.write") && (
          <div className="actions">
            <button type="button" onClick={createExample} disabled={example.isPending}>
              Create the invoices example
            </button>
            <a className="button primary" href={routeHash({ page: "pipe", org, pipeId: "new" })}>
              New pipe
            </a>
          </div>
        )}
      </div>
      <ErrorNotice error={pipes.error ?? example.error} />
      <DataTable
        label="Pipes"
        rows={pipes.items}
        rowKey={(pipe) => pipe.id}
        empty="No pipes here yet. Create one with New pipe: choose the formats it accepts, then activate it."
        columns={[
          { header: "Name", rowHeader: true, cell: (pipe) => <a href={routeHash({ page: "pipe", org, pipeId: pipe.id })}>{pipe.name}</a> },
          { header: "State", cell: (pipe) => <Badge tone={PIPE_STATE_TONES[pipe.state]}>{enumLabel(PipeState, pipe.state)}</Badge> },
          { header: "Workspace", cell: (pipe) => workspaceName(pipe.workspaceId) },
          {
            header: "Accepts",
            cell: (pipe) => {
              const trigger = pipe.pipeline?.nodes[0]?.kind;
              return trigger?.case === "httpTrigger" ? `${trigger.value.acceptedFormats.join(", ")} · up to ${trigger.value.maxSizeMb} MB` : "";
            },
          },
          { header: "Updated", cell: (pipe) => formatTime(pipe.updateTime) },
        ]}
      />
      <LoadMore query={pipes.query} />
    </section>
  );
}
