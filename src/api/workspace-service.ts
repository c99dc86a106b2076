import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { type Organization, OrganizationSchema } from "../../gen/docpipe/v1/organization_pb.js";
import { type Workspace, WorkspaceSchema } from "../../gen/docpipe/v1/workspace_pb.js";
import type { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { findOrganization, insertOrganization, listOrganizations, type OrganizationRow, updateOrganization } from "../data/repositories/organizations.ts";
import { deleteWorkspace, findWorkspace, insertWorkspace, listWorkspaces, renameWorkspace, type WorkspaceRow } from "../data/repositories/workspaces.ts";
import { type Caller, callerKey } from "../platform/auth/caller.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid, newId } from "../platform/ids.ts";
import { requireName } from "./names.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";

const DEFAULT_PLAN = "free";

/** The organizations a caller may see: undefined for all (the operator). */
function visibleOrganizations(caller: Caller | undefined): string[] | undefined {
  switch (caller?.kind) {
    case "account":
      return [...caller.roles.keys()];
    case "service_token":
      return [caller.organizationId];
    case undefined:
      return [];
    default:
      return undefined;
  }
}
const DEFAULT_WORKSPACE_NAME = "Default";

/** A plan the configuration knows, else InvalidArgument listing the known ones. */
function requirePlan(plans: Readonly<Record<string, number>>, plan: string): string {
  if (!Object.hasOwn(plans, plan)) throw invalidArgument("plan", `plan must be one of ${Object.keys(plans).join(", ")}`);
  return plan;
}

function toOrganization(organization: OrganizationRow): Organization {
  return create(OrganizationSchema, {
    id: organization.id,
    name: organization.name,
    plan: organization.plan,
    defaultWorkspaceId: organization.default_workspace_id,
    createTime: timestampFromDate(organization.create_time),
  });
}

function toWorkspace(workspace: WorkspaceRow): Workspace {
  return create(WorkspaceSchema, {
    id: workspace.id,
    organizationId: workspace.organization_id,
    name: workspace.name,
    isDefault: workspace.is_default,
    createTime: timestampFromDate(workspace.create_time),
    updateTime: timestampFromDate(workspace.update_time),
  });
}

function foundOrganization(organization: OrganizationRow | undefined): OrganizationRow {
  if (organization === undefined) throw notFound("organization");
  return organization;
}

/** The workspace, or NotFound: missing, deleted, and another organization's look alike. */
function foundWorkspace(workspace: WorkspaceRow | undefined): WorkspaceRow {
  if (workspace === undefined) throw notFound("workspace");
  return workspace;
}

/** The ids of a request naming one workspace; ids that are not UUIDs name nothing. */
function workspaceIds(request: { organizationId: string; workspaceId: string }): [string, string] {
  if (!isUuid(request.organizationId) || !isUuid(request.workspaceId)) throw notFound("workspace");
  return [request.organizationId, request.workspaceId];
}

export function createWorkspaceService(deps: ServiceDeps): ServiceImpl<typeof WorkspaceService> {
  const { db, config, pageTokens } = deps;

  return {
    async createOrganization(request) {
      const name = requireName("name", request.name);
      const plan = requirePlan(config.plans, request.plan === "" ? DEFAULT_PLAN : request.plan);
      const now = deps.now();
      const created = await insertOrganization(
        db,
        { id: newId(), name, plan, create_time: now },
        { id: newId(), name: DEFAULT_WORKSPACE_NAME, create_time: now, update_time: now },
      );
      return { organization: toOrganization(created.organization), defaultWorkspace: toWorkspace(created.defaultWorkspace) };
    },

    async getOrganization(request) {
      return { organization: toOrganization(foundOrganization(await findOrganization(db, request.organizationId))) };
    },

    async listOrganizations(request, context) {
      // The operator lists every organization; anyone else only those they have a role in.
      const ids = visibleOrganizations(context.values.get(callerKey));
      const page = await listPage(pageTokens, request, { list: "organizations", ids }, (afterId, limit) => listOrganizations(db, { afterId, limit, ids }));
      return { organizations: page.items.map(toOrganization), nextPageToken: page.nextPageToken };
    },

    async updateOrganization(request) {
      const changes = {
        ...(request.name === undefined ? {} : { name: requireName("name", request.name) }),
        ...(request.plan === undefined ? {} : { plan: requirePlan(config.plans, request.plan) }),
      };
      return { organization: toOrganization(foundOrganization(await updateOrganization(db, request.organizationId, changes))) };
    },

    async createWorkspace(request) {
      const name = requireName("name", request.name);
      await requireOrganization(db, request.organizationId);
      const now = deps.now();
      const workspace = await insertWorkspace(db, {
        id: newId(),
        organization_id: request.organizationId,
        name,
        create_time: now,
        update_time: now,
      });
      return { workspace: toWorkspace(workspace) };
    },

    async getWorkspace(request) {
      return { workspace: toWorkspace(foundWorkspace(await findWorkspace(db, ...workspaceIds(request)))) };
    },

    async listWorkspaces(request) {
      const { organizationId } = request;
      const page = await listPage(
        pageTokens,
        request,
        { list: "workspaces", organizationId },
        (afterId, limit) => listWorkspaces(db, { organizationId, afterId, limit }),
        () => requireOrganization(db, organizationId),
      );
      return { workspaces: page.items.map(toWorkspace), nextPageToken: page.nextPageToken };
    },

    async updateWorkspace(request) {
      const name = requireName("name", request.name);
      return { workspace: toWorkspace(foundWorkspace(await renameWorkspace(db, ...workspaceIds(request), name, deps.now()))) };
    },

    async deleteWorkspace(request) {
      const deletion = await deleteWorkspace(db, ...workspaceIds(request), deps.now());
      if (deletion === "not_found") throw notFound("workspace");
      if (deletion === "default") {
        throw serviceError(Code.FailedPrecondition, "default_workspace_undeletable", "the default workspace cannot be deleted");
      }
      return {};
    },
  };
}
