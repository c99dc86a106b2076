import { Code } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/data/db/schema.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { newId } from "../../src/platform/ids.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf } from "../support/errors.ts";
import { inMemoryClients } from "../support/services.ts";

const MISSING_ID = "01890000-0000-7000-8000-000000000000";

/** The Connect code, ErrorInfo reason and field a call failed with. */
async function failure(call: Promise<unknown>): Promise<{ code: string; reason: string | undefined; field?: string }> {
  const error = await connectErrorOf(call);
  const info = errorInfoOf(error);
  return { code: Code[error.code], reason: info?.reason, ...(info?.metadata.field === undefined ? {} : { field: info.metadata.field }) };
}

/** WorkspaceService as the internal port serves it, called by the operator (who lists every organization). */
function inMemory(deps: ServiceDeps) {
  return inMemoryClients(deps).workspaces;
}

let db: Kysely<Database>;
let client: ReturnType<typeof inMemory>;

beforeAll(async () => {
  db = await testDatabase();
  client = inMemory(testDeps(db));
});

async function newOrganization(name = "Workspace test org") {
  const created = await client.createOrganization({ name });
  return { organizationId: created.organization!.id, defaultWorkspaceId: created.defaultWorkspace!.id };
}

async function newWorkspace(organizationId: string, name = "Invoices") {
  return (await client.createWorkspace({ organizationId, name })).workspace!;
}

const workspaceNotFound = { code: "NotFound", reason: "workspace_not_found" };
const organizationNotFound = { code: "NotFound", reason: "organization_not_found" };
const pageTokenInvalid = { code: "InvalidArgument", reason: "page_token_invalid", field: "page_token" };

describe("CreateOrganization", () => {
  it("creates the organization on the free plan with its default workspace", async () => {
    const { organization, defaultWorkspace } = await client.createOrganization({ name: "  Acme  " });
    expect(organization).toMatchObject({ name: "Acme", plan: "free", defaultWorkspaceId: defaultWorkspace!.id });
    expect(defaultWorkspace).toMatchObject({ organizationId: organization!.id, name: "Default", isDefault: true });
    expect(organization!.createTime).toBeDefined();
  });

  it.each(["free", "basic", "standard", "advanced"])("accepts the %s plan", async (plan) => {
    expect((await client.createOrganization({ name: "Acme", plan })).organization!.plan).toBe(plan);
  });

  it("accepts a plan the operator configured", async () => {
    const api = inMemory(testDeps(db, { PLANS: '{"enterprise":5000}' }));
    expect((await api.createOrganization({ name: "Acme", plan: "enterprise" })).organization!.plan).toBe("enterprise");
  });

  it("rejects an unknown plan with InvalidArgument, creating nothing", async () => {
    const name = `Unknown plan ${newId()}`;
    expect(await failure(client.createOrganization({ name, plan: "platinum" }))).toEqual({
      code: "InvalidArgument",
      reason: "invalid_argument",
      field: "plan",
    });
    expect(await db.selectFrom("organizations").select("id").where("name", "=", name).executeTakeFirst()).toBeUndefined();
  });

  it.each([
    ["empty", ""],
    ["blank", " \t "],
    ["201 characters", "o".repeat(201)],
  ])("rejects a name that is %s", async (_, name) => {
    expect(await failure(client.createOrganization({ name }))).toEqual({ code: "InvalidArgument", reason: "invalid_argument", field: "name" });
  });
});

describe("GetOrganization", () => {
  it("returns the organization with its default workspace id", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization("Globex");
    const { organization } = await client.getOrganization({ organizationId });
    expect(organization).toMatchObject({ id: organizationId, name: "Globex", plan: "free", defaultWorkspaceId });
  });

  it.each([MISSING_ID, "not-a-uuid"])("is NotFound for %j", async (organizationId) => {
    expect(await failure(client.getOrganization({ organizationId }))).toEqual(organizationNotFound);
  });

  it("is InvalidArgument naming organization_id when it is left empty", async () => {
    expect(await failure(client.getOrganization({ organizationId: "" }))).toEqual({
      code: "InvalidArgument",
      reason: "invalid_argument",
      field: "organization_id",
    });
  });
});

describe("ListOrganizations", () => {
  it("lists organizations oldest first, a page at a time", async () => {
    const created = [(await newOrganization()).organizationId, (await newOrganization()).organizationId, (await newOrganization()).organizationId];
    const first = await client.listOrganizations({ pageSize: 1 });
    expect(first.organizations).toHaveLength(1);
    expect(first.nextPageToken).not.toBe("");
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listOrganizations({ pageSize: 500, pageToken });
      seen.push(...page.organizations.map((organization) => organization.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual([...seen].sort());
    expect(seen.filter((id) => created.includes(id))).toEqual(created);
  });

  it("rejects a tampered page token", async () => {
    await newOrganization();
    await newOrganization();
    const { nextPageToken } = await client.listOrganizations({ pageSize: 1 });
    expect(await failure(client.listOrganizations({ pageToken: `x${nextPageToken}` }))).toEqual(pageTokenInvalid);
  });
});

describe("UpdateOrganization", () => {
  it("renames the organization and changes its plan", async () => {
    const { organizationId } = await newOrganization("Old name");
    const { organization } = await client.updateOrganization({ organizationId, name: " New name ", plan: "advanced" });
    expect(organization).toMatchObject({ name: "New name", plan: "advanced" });
    expect((await client.getOrganization({ organizationId })).organization).toEqual(organization);
  });

  it("changes only the fields that are set", async () => {
    const { organizationId } = await newOrganization("Kept");
    expect((await client.updateOrganization({ organizationId, plan: "basic" })).organization).toMatchObject({ name: "Kept", plan: "basic" });
    expect((await client.updateOrganization({ organizationId })).organization).toMatchObject({ name: "Kept", plan: "basic" });
  });

  it("rejects an unknown plan and an empty name", async () => {
    const { organizationId } = await newOrganization();
    expect(await failure(client.updateOrganization({ organizationId, plan: "" }))).toEqual({
      code: "InvalidArgument",
      reason: "invalid_argument",
      field: "plan",
    });
    expect(await failure(client.updateOrganization({ organizationId, name: "" }))).toEqual({
      code: "InvalidArgument",
      reason: "invalid_argument",
      field: "name",
    });
  });

  it("is NotFound for an unknown organization", async () => {
    expect(await failure(client.updateOrganization({ organizationId: MISSING_ID, name: "x" }))).toEqual(organizationNotFound);
    expect(await failure(client.updateOrganization({ organizationId: "nope", name: "x" }))).toEqual(organizationNotFound);
  });
});

describe("CreateWorkspace and GetWorkspace", () => {
  it("creates a non-default workspace that GetWorkspace returns", async () => {
    const { organizationId } = await newOrganization();
    const workspace = await newWorkspace(organizationId, "  Receipts ");
    expect(workspace).toMatchObject({ organizationId, name: "Receipts", isDefault: false });
    expect(workspace.updateTime).toEqual(workspace.createTime);
    expect((await client.getWorkspace({ organizationId, workspaceId: workspace.id })).workspace).toEqual(workspace);
  });

  it("rejects an invalid name and an unknown organization", async () => {
    const { organizationId } = await newOrganization();
    expect(await failure(client.createWorkspace({ organizationId, name: "" }))).toEqual({ code: "InvalidArgument", reason: "invalid_argument", field: "name" });
    expect(await failure(client.createWorkspace({ organizationId: MISSING_ID, name: "x" }))).toEqual(organizationNotFound);
  });

  it.each([MISSING_ID, "not-a-uuid"])("GetWorkspace is NotFound for %j", async (workspaceId) => {
    const { organizationId } = await newOrganization();
    expect(await failure(client.getWorkspace({ organizationId, workspaceId }))).toEqual(workspaceNotFound);
  });
});

describe("ListWorkspaces", () => {
  it("lists the default workspace first, then the others oldest first, a page at a time", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    const others = [(await newWorkspace(organizationId, "a")).id, (await newWorkspace(organizationId, "b")).id, (await newWorkspace(organizationId, "c")).id];
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listWorkspaces({ organizationId, pageSize: 2, pageToken });
      seen.push(...page.workspaces.map((workspace) => workspace.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual([defaultWorkspaceId, ...others]);
  });

  it("rejects a tampered page token and one from another organization", async () => {
    const { organizationId } = await newOrganization();
    await newWorkspace(organizationId);
    const { nextPageToken } = await client.listWorkspaces({ organizationId, pageSize: 1 });
    const [payload, signature] = nextPageToken.split(".");
    const otherPayload = Buffer.from(MISSING_ID).toString("base64url");
    expect(payload).not.toBe(otherPayload);
    expect(await failure(client.listWorkspaces({ organizationId, pageToken: `${otherPayload}.${signature}` }))).toEqual(pageTokenInvalid);
    const other = await newOrganization();
    expect(await failure(client.listWorkspaces({ organizationId: other.organizationId, pageToken: nextPageToken }))).toEqual(pageTokenInvalid);
  });

  it("is NotFound for an unknown organization", async () => {
    expect(await failure(client.listWorkspaces({ organizationId: MISSING_ID }))).toEqual(organizationNotFound);
  });
});

describe("UpdateWorkspace", () => {
  it("renames the workspace and moves its update time", async () => {
    const { organizationId } = await newOrganization();
    const workspace = await newWorkspace(organizationId, "Before");
    const later = inMemory(testDeps(db, {}, () => new Date(Date.now() + 60_000)));
    const renamed = (await later.updateWorkspace({ organizationId, workspaceId: workspace.id, name: " After " })).workspace!;
    expect(renamed).toMatchObject({ id: workspace.id, name: "After", createTime: workspace.createTime });
    expect(renamed.updateTime!.seconds).toBeGreaterThan(workspace.updateTime!.seconds);
  });

  it("renames the default workspace too", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    const { workspace } = await client.updateWorkspace({ organizationId, workspaceId: defaultWorkspaceId, name: "Main" });
    expect(workspace).toMatchObject({ name: "Main", isDefault: true });
  });

  it("rejects an invalid name", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    expect(await failure(client.updateWorkspace({ organizationId, workspaceId: defaultWorkspaceId, name: "w".repeat(201) }))).toEqual({
      code: "InvalidArgument",
      reason: "invalid_argument",
      field: "name",
    });
  });
});

describe("DeleteWorkspace", () => {
  it("refuses to delete the default workspace", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    expect(await failure(client.deleteWorkspace({ organizationId, workspaceId: defaultWorkspaceId }))).toEqual({
      code: "FailedPrecondition",
      reason: "default_workspace_undeletable",
    });
    expect((await client.getWorkspace({ organizationId, workspaceId: defaultWorkspaceId })).workspace!.isDefault).toBe(true);
  });

  it("deletes a workspace, which is NotFound everywhere afterwards", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    const workspaceId = (await newWorkspace(organizationId)).id;
    await client.deleteWorkspace({ organizationId, workspaceId });
    expect(await failure(client.getWorkspace({ organizationId, workspaceId }))).toEqual(workspaceNotFound);
    expect(await failure(client.updateWorkspace({ organizationId, workspaceId, name: "x" }))).toEqual(workspaceNotFound);
    expect(await failure(client.deleteWorkspace({ organizationId, workspaceId }))).toEqual(workspaceNotFound);
    expect((await client.listWorkspaces({ organizationId })).workspaces.map((workspace) => workspace.id)).toEqual([defaultWorkspaceId]);
  });

  it("deletes the workspace's pipes with it and keeps their runs and files readable", async () => {
    const { organizationId } = await newOrganization();
    const workspaceId = (await newWorkspace(organizationId)).id;
    const pipeId = newId();
    const fileId = newId();
    const runId = newId();
    await db
      .insertInto("pipes")
      .values({ id: pipeId, organization_id: organizationId, workspace_id: workspaceId, name: "p", state: "active", pipeline_version: 1 })
      .execute();
    await db
      .insertInto("files")
      .values({ id: fileId, organization_id: organizationId, name: "a.pdf", content_type: "application/pdf", format: "pdf", size: 1, sha256: "0".repeat(64) })
      .execute();
    await db
      .insertInto("runs")
      .values({
        id: runId,
        organization_id: organizationId,
        workspace_id: workspaceId,
        pipe_id: pipeId,
        pipeline_version: 1,
        file_id: fileId,
        api_key_id: null,
        status: "completed",
      })
      .execute();

    await client.deleteWorkspace({ organizationId, workspaceId });

    const pipe = await db.selectFrom("pipes").select("delete_time").where("id", "=", pipeId).executeTakeFirstOrThrow();
    expect(pipe.delete_time).toBeInstanceOf(Date);
    expect(await db.selectFrom("runs").select("id").where("id", "=", runId).executeTakeFirst()).toEqual({ id: runId });
    expect(await db.selectFrom("files").select("id").where("id", "=", fileId).executeTakeFirst()).toEqual({ id: fileId });
  });
});

describe("organization scope", () => {
  it("every workspace RPC on another organization's workspace is NotFound", async () => {
    const owner = await newOrganization();
    const workspaceId = (await newWorkspace(owner.organizationId, "Private")).id;
    const { organizationId } = await newOrganization();
    for (const target of [workspaceId, owner.defaultWorkspaceId]) {
      expect(await failure(client.getWorkspace({ organizationId, workspaceId: target }))).toEqual(workspaceNotFound);
      expect(await failure(client.updateWorkspace({ organizationId, workspaceId: target, name: "Taken" }))).toEqual(workspaceNotFound);
      expect(await failure(client.deleteWorkspace({ organizationId, workspaceId: target }))).toEqual(workspaceNotFound);
    }
    const listed = (await client.listWorkspaces({ organizationId })).workspaces.map((workspace) => workspace.id);
    expect(listed).not.toContain(workspaceId);
    expect(listed).not.toContain(owner.defaultWorkspaceId);
    // Nothing changed for the owner.
    expect((await client.getWorkspace({ organizationId: owner.organizationId, workspaceId })).workspace!.name).toBe("Private");
  });
});
