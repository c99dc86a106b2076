import { useMutation } from "@connectrpc/connect-query";
import { useState } from "react";
import type { Workspace } from "../../../gen/docpipe/v1/workspace_pb.js";
import { createWorkspace, deleteWorkspace, updateWorkspace } from "../../../gen/docpipe/v1/workspace_service-WorkspaceService_connectquery.js";
import { ConfirmDialog, ErrorNotice, Field, Modal, TableBox } from "../components.tsx";
import { describeError } from "../errors.ts";
import { formatTime } from "../format.ts";
import { WorkspaceService } from "../../../gen/docpipe/v1/workspace_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { useSingleFlight } from "../single-flight.ts";
import { usePermissions } from "../permissions.ts";

/** Create, rename and delete workspaces; the default workspace is never deleted. */
export function WorkspacesPage({ org, workspaces }: { org: string; workspaces: Workspace[] }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(WorkspaceService);
  const [name, setName] = useState("");
  const [renaming, setRenaming] = useState<Workspace | undefined>(undefined);
  const [deleting, setDeleting] = useState<Workspace | undefined>(undefined);
  const refresh = () => invalidate();
  const create = useMutation(createWorkspace, {
    onSuccess: () => {
      setName("");
      return refresh();
    },
  });
  const addWorkspace = useSingleFlight(() => create.mutateAsync({ organizationId: org, name }));
  const remove = useMutation(deleteWorkspace, {
    onSuccess: () => {
      setDeleting(undefined);
      return refresh();
    },
  });
  const problem = create.error ? describeError(create.error) : undefined;

  return (
    <section aria-labelledby="workspaces-title">
      <h1 id="workspaces-title">Workspaces</h1>
      <p className="muted">Workspaces group pipes and their runs. Programs pick one with the X-Workspace-Id header; without it the default applies.</p>
      {may("workspaces.write") && (
        <form
          className="card inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            addWorkspace();
          }}
        >
          <Field label="New workspace name" error={problem?.field === "name" ? problem.message : undefined}>
            {(control) => <input {...control} required value={name} onChange={(event) => setName(event.target.value)} />}
          </Field>
          <button type="submit" className="primary" disabled={create.isPending}>
            Create workspace
          </button>
        </form>
      )}
      {problem && problem.field !== "name" && <ErrorNotice error={create.error} />}
      <TableBox label="Workspaces">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">ID</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {workspaces.map((workspace) => (
              <tr key={workspace.id}>
                <th scope="row">
                  {workspace.name} {workspace.isDefault && <span className="badge neutral">Default</span>}
                </th>
                <td>
                  <code>{workspace.id}</code>
                </td>
                <td>{formatTime(workspace.createTime)}</td>
                <td className="row-actions">
                  {may("workspaces.write") && (
                    <>
                      <button type="button" aria-label={`Rename ${workspace.name}`} onClick={() => setRenaming(workspace)}>
                        Rename
                      </button>
                      {!workspace.isDefault && (
                        <button
                          type="button"
                          className="danger"
                          aria-label={`Delete ${workspace.name}`}
                          onClick={() => {
                            remove.reset();
                            setDeleting(workspace);
                          }}
                        >
                          Delete
                        </button>
                      )}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {renaming && <RenameDialog org={org} workspace={renaming} onClose={() => setRenaming(undefined)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete “${deleting.name}”?`}
          confirmLabel="Delete workspace"
          danger
          pending={remove.isPending}
          error={remove.error}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() => remove.mutate({ organizationId: org, workspaceId: deleting.id })}
        >
          <p>This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function RenameDialog({ org, workspace, onClose }: { org: string; workspace: Workspace; onClose: () => void }) {
  const invalidate = useInvalidate(WorkspaceService);
  const [name, setName] = useState(workspace.name);
  const rename = useMutation(updateWorkspace, {
    onSuccess: () => {
      void invalidate();
      onClose();
    },
  });
  const problem = rename.error ? describeError(rename.error) : undefined;
  return (
    <Modal title={`Rename “${workspace.name}”`} onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          rename.mutate({ organizationId: org, workspaceId: workspace.id, name });
        }}
      >
        <Field label="Name" error={problem?.field === "name" ? problem.message : undefined}>
          {(control) => <input {...control} required value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        {problem && problem.field !== "name" && <ErrorNotice error={rename.error} />}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={rename.isPending}>
            Rename
          </button>
        </div>
      </form>
    </Modal>
  );
}
