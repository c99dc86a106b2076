import { once } from "node:events";
import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { isMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Kysely, KyselyPlugin } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { type PipelineSchema, PipeState } from "../../gen/docpipe/v1/pipe_pb.js";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { DeletePipeResponseSchema, type PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import type { Database } from "../../src/data/db/schema.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { newId } from "../../src/platform/ids.ts";
import { inMemoryClients, inProcessRoutes } from "../support/services.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf } from "../support/errors.ts";

const MISSING_ID = "01890000-0000-7000-8000-000000000000";

/** Pipe management and trigger resolution (TriggerService) on one client, as the tests use them together. */
type PipeClient = Client<typeof PipeService> & Client<typeof TriggerService>;
type PipelineInit = MessageInitShape<typeof PipelineSchema>;

function inMemory(deps: ServiceDeps): PipeClient {
  const { pipes, trigger } = inMemoryClients(deps);
  return { ...pipes, ...trigger };
}

/** The Connect code, ErrorInfo reason and metadata a call failed with. */
async function failure(call: Promise<unknown>) {
  const error = await connectErrorOf(call);
  const info = errorInfoOf(error);
  return { code: Code[error.code], reason: info?.reason, metadata: info?.metadata, message: error.rawMessage };
}

const runnable: PipelineInit = {
  nodes: [
    { kind: { case: "httpTrigger", value: { allowedOrigins: ["https://app.example.com"], acceptedFormats: ["pdf", "png"], maxSizeMb: 25 } } },
    { kind: { case: "parse", value: {} } },
  ],
};

let db: Kysely<Database>;
let pipes: PipeClient;

beforeAll(async () => {
  db = await testDatabase();
  pipes = inMemory(testDeps(db));
});

/** An organization of its own (tests are isolated by data), with its default workspace and a second one. */
async function newOrganization() {
  const organizationId = newId();
  const defaultWorkspaceId = newId();
  const otherWorkspaceId = newId();
  await db.insertInto("organizations").values({ id: organizationId, name: "Pipe test org", plan: "free" }).execute();
  await db
    .insertInto("workspaces")
    .values([
      { id: defaultWorkspaceId, organization_id: organizationId, name: "Default", is_default: true },
      { id: otherWorkspaceId, organization_id: organizationId, name: "Other" },
    ])
    .execute();
  return { organizationId, defaultWorkspaceId, otherWorkspaceId };
}

async function newPipe(options: { api?: PipeClient; organizationId?: string; workspaceId?: string; pipeline?: PipelineInit; active?: boolean } = {}) {
  const api = options.api ?? pipes;
  const organization = options.organizationId === undefined ? await newOrganization() : undefined;
  const organizationId = options.organizationId ?? organization!.organizationId;
  const { pipe } = await api.createPipe({
    organizationId,
    workspaceId: options.workspaceId ?? "",
    name: "Invoices",
    pipeline: options.pipeline ?? runnable,
  });
  if (options.active === true) await api.activatePipe({ organizationId, pipeId: pipe!.id });
  return { ...organization, organizationId, pipe: pipe!, pipeId: pipe!.id };
}

async function deleteWorkspaceRow(workspaceId: string) {
  await db.updateTable("workspaces").set({ delete_time: new Date() }).where("id", "=", workspaceId).execute();
}

describe("CreatePipe", () => {
  it("creates a paused pipe with version 1 in the default workspace, assigning node ids", async () => {
    const { organizationId, defaultWorkspaceId } = await newOrganization();
    const { pipe } = await pipes.createPipe({ organizationId, name: "  Invoices  ", description: "Supplier invoices", pipeline: runnable });
    expect(pipe).toMatchObject({
      organizationId,
      workspaceId: defaultWorkspaceId,
      name: "Invoices",
      description: "Supplier invoices",
      state: PipeState.PAUSED,
      pipelineVersion: 1,
    });
    expect(pipe!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    expect(pipe!.pipeline!.nodes.map((node) => node.id)).toEqual(["http_trigger-1", "parse-1"]);
    expect(pipe!.createTime).toEqual(pipe!.updateTime);
    expect((await pipes.getPipe({ organizationId, pipeId: pipe!.id })).pipe).toEqual(pipe);
    const versions = await db.selectFrom("pipeline_versions").select("version").where("pipe_id", "=", pipe!.id).execute();
    expect(versions).toEqual([{ version: 1 }]);
  });

  it("allows an empty pipeline while the pipe is drafted", async () => {
    const { organizationId } = await newOrganization();
    const { pipe } = await pipes.createPipe({ organizationId, name: "Draft" });
    expect(pipe!.pipeline!.nodes).toEqual([]);
    expect(pipe!.pipelineVersion).toBe(1);
  });

  it("creates the pipe in the workspace named", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    const { pipe } = await newPipe({ organizationId, workspaceId: otherWorkspaceId });
    expect(pipe.workspaceId).toBe(otherWorkspaceId);
  });

  it.each([
    ["empty", ""],
    ["blank", " \n "],
    ["201 characters", "n".repeat(201)],
  ])("rejects a name that is %s", async (_, name) => {
    const { organizationId } = await newOrganization();
    expect(await failure(pipes.createPipe({ organizationId, name }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_argument",
      metadata: { field: "name" },
    });
  });

  it("accepts a name of 200 characters and a description of 2000, and rejects a longer description", async () => {
    const { organizationId } = await newOrganization();
    const { pipe } = await pipes.createPipe({ organizationId, name: "ü".repeat(200), description: "d".repeat(2000) });
    expect(pipe!.name).toBe("ü".repeat(200));
    expect(await failure(pipes.createPipe({ organizationId, name: "x", description: "d".repeat(2001) }))).toMatchObject({
      code: "InvalidArgument",
      metadata: { field: "description" },
    });
  });

  it("rejects an invalid pipeline with invalid_pipeline naming the field, and writes nothing", async () => {
    const { organizationId } = await newOrganization();
    const pipeline: PipelineInit = { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 101 } } }] };
    expect(await failure(pipes.createPipe({ organizationId, name: "Too big", pipeline }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_pipeline",
      metadata: { field: "pipeline.nodes[0].http_trigger.max_size_mb" },
    });
    expect(await db.selectFrom("pipes").select("id").where("organization_id", "=", organizationId).execute()).toEqual([]);
  });

  it("rejects a validate node's schema that Ajv cannot compile with invalid_pipeline naming the schema, and writes nothing", async () => {
    const { organizationId } = await newOrganization();
    const pipeline: PipelineInit = {
      nodes: [
        { kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 10 } } },
        { kind: { case: "validate", value: { schema: JSON.stringify({ type: "object", properties: { n: { minimum: "one" } } }) } } },
      ],
    };
    expect(await failure(pipes.createPipe({ organizationId, name: "Bad schema", pipeline }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_pipeline",
      metadata: { field: "pipeline.nodes[1].validate.schema" },
    });
    expect(await db.selectFrom("pipes").select("id").where("organization_id", "=", organizationId).execute()).toEqual([]);
  });

  it("checks max_size_mb against the operator's MAX_SIZE_MB_LIMIT", async () => {
    const roomy = inMemory(testDeps(db, { MAX_SIZE_MB_LIMIT: "500" }));
    const pipeline: PipelineInit = { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 500 } } }] };
    const { pipe } = await newPipe({ api: roomy, pipeline });
    expect(pipe.pipeline!.nodes[0]!.kind).toMatchObject({ case: "httpTrigger", value: { maxSizeMb: 500 } });
  });

  it("refuses a deleted workspace with workspace_not_found", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    await deleteWorkspaceRow(otherWorkspaceId);
    expect(await failure(pipes.createPipe({ organizationId, workspaceId: otherWorkspaceId, name: "x" }))).toMatchObject({
      code: "NotFound",
      reason: "workspace_not_found",
    });
  });

  it("refuses a malformed workspace id with workspace_id_invalid", async () => {
    const { organizationId } = await newOrganization();
    expect(await failure(pipes.createPipe({ organizationId, workspaceId: "default", name: "x" }))).toMatchObject({
      code: "InvalidArgument",
      reason: "workspace_id_invalid",
      metadata: { field: "workspace_id" },
    });
  });

  it("refuses an unknown organization with organization_not_found", async () => {
    for (const organizationId of [MISSING_ID, "acme"]) {
      expect(await failure(pipes.createPipe({ organizationId, name: "x" }))).toMatchObject({ code: "NotFound", reason: "organization_not_found" });
    }
  });
});

describe("GetPipe", () => {
  it("returns NotFound pipe_not_found for an unknown id and for an id that is not a UUID", async () => {
    const { organizationId } = await newOrganization();
    for (const pipeId of [MISSING_ID, "not-a-uuid", ""]) {
      expect(await failure(pipes.getPipe({ organizationId, pipeId }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
    }
  });

  it("returns NotFound for a pipe whose workspace was deleted", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    const { pipeId } = await newPipe({ organizationId, workspaceId: otherWorkspaceId });
    await deleteWorkspaceRow(otherWorkspaceId);
    expect(await failure(pipes.getPipe({ organizationId, pipeId }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
  });
});

describe("ListPipes", () => {
  it("lists newest first, page by page, ending with an empty next_page_token", async () => {
    const { organizationId } = await newOrganization();
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await newPipe({ organizationId })).pipeId);
    const seen: string[] = [];
    let pageToken = "";
    let pages = 0;
    do {
      const page = await pipes.listPipes({ organizationId, pageSize: 2, pageToken });
      seen.push(...page.pipes.map((pipe) => pipe.id));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== "");
    expect(seen).toEqual(created.reverse());
    expect(pages).toBe(3);
  });

  it("filters by workspace and by state, and leaves deleted pipes out", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    const paused = await newPipe({ organizationId });
    const active = await newPipe({ organizationId, active: true });
    const elsewhere = await newPipe({ organizationId, workspaceId: otherWorkspaceId });
    const deleted = await newPipe({ organizationId });
    await pipes.deletePipe({ organizationId, pipeId: deleted.pipeId });
    const ids = async (request: { workspaceId?: string; state?: PipeState }) =>
      (await pipes.listPipes({ organizationId, ...request })).pipes.map((pipe) => pipe.id);
    expect(await ids({})).toEqual([elsewhere.pipeId, active.pipeId, paused.pipeId]);
    expect(await ids({ workspaceId: otherWorkspaceId })).toEqual([elsewhere.pipeId]);
    expect(await ids({ state: PipeState.ACTIVE })).toEqual([active.pipeId]);
    expect(await ids({ state: PipeState.PAUSED })).toEqual([elsewhere.pipeId, paused.pipeId]);
    expect(await ids({ workspaceId: otherWorkspaceId, state: PipeState.ACTIVE })).toEqual([]);
  });

  it("rejects a tampered page token, and a token of another query, with page_token_invalid", async () => {
    const { organizationId } = await newOrganization();
    await newPipe({ organizationId });
    await newPipe({ organizationId });
    const { nextPageToken } = await pipes.listPipes({ organizationId, pageSize: 1 });
    const [payload, signature] = nextPageToken.split(".");
    const tampered = `${Buffer.from(MISSING_ID).toString("base64url")}.${signature}`;
    for (const request of [
      { organizationId, pageSize: 1, pageToken: tampered },
      { organizationId, pageSize: 1, pageToken: `${payload}.x${signature}` },
      { organizationId, pageSize: 1, pageToken: nextPageToken, state: PipeState.ACTIVE },
    ]) {
      expect(await failure(pipes.listPipes(request))).toMatchObject({ code: "InvalidArgument", reason: "page_token_invalid" });
    }
  });

  it("rejects a negative page size, an unknown state and a malformed workspace id", async () => {
    const { organizationId } = await newOrganization();
    expect(await failure(pipes.listPipes({ organizationId, pageSize: -1 }))).toMatchObject({ code: "InvalidArgument", metadata: { field: "page_size" } });
    expect(await failure(pipes.listPipes({ organizationId, state: 7 as PipeState }))).toMatchObject({ code: "InvalidArgument", metadata: { field: "state" } });
    expect(await failure(pipes.listPipes({ organizationId, workspaceId: "x" }))).toMatchObject({ code: "InvalidArgument", reason: "workspace_id_invalid" });
  });

  it("returns NotFound for an unknown organization and for a deleted workspace filter", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    await deleteWorkspaceRow(otherWorkspaceId);
    expect(await failure(pipes.listPipes({ organizationId: MISSING_ID }))).toMatchObject({ code: "NotFound", reason: "organization_not_found" });
    expect(await failure(pipes.listPipes({ organizationId, workspaceId: otherWorkspaceId }))).toMatchObject({
      code: "NotFound",
      reason: "workspace_not_found",
    });
  });
});

describe("UpdatePipe", () => {
  it("changes name and description without a new pipeline version", async () => {
    const { organizationId, pipeId } = await newPipe();
    const { pipe } = await pipes.updatePipe({ organizationId, pipeId, name: " Receipts ", description: "" });
    expect(pipe).toMatchObject({ name: "Receipts", description: "", pipelineVersion: 1 });
    expect((await pipes.updatePipe({ organizationId, pipeId, description: "kept name" })).pipe).toMatchObject({ name: "Receipts", description: "kept name" });
  });

  it("turns test mode on and off without a new pipeline version; a pipe starts out of test mode", async () => {
    const { organizationId, pipeId, pipe: created } = await newPipe();
    expect(created.testMode).toBe(false);
    expect((await pipes.updatePipe({ organizationId, pipeId, testMode: true })).pipe).toMatchObject({ testMode: true, pipelineVersion: 1 });
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.testMode).toBe(true);
    expect((await pipes.updatePipe({ organizationId, pipeId, name: "kept" })).pipe!.testMode).toBe(true);
    expect((await pipes.updatePipe({ organizationId, pipeId, testMode: false })).pipe!.testMode).toBe(false);
  });

  it("sets retention_days 0..3650 without a new pipeline version; a pipe starts keeping every run (0)", async () => {
    const { organizationId, pipeId, pipe: created } = await newPipe();
    expect(created.retentionDays).toBe(0);
    expect((await pipes.updatePipe({ organizationId, pipeId, retentionDays: 30 })).pipe).toMatchObject({ retentionDays: 30, pipelineVersion: 1 });
    expect((await pipes.updatePipe({ organizationId, pipeId, name: "kept" })).pipe!.retentionDays).toBe(30);
    expect((await pipes.updatePipe({ organizationId, pipeId, retentionDays: 3650 })).pipe!.retentionDays).toBe(3650);
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.retentionDays).toBe(3650);
    expect((await pipes.updatePipe({ organizationId, pipeId, retentionDays: 0 })).pipe!.retentionDays).toBe(0);
    const made = await pipes.createPipe({ organizationId, workspaceId: "", name: "Short-lived", retentionDays: 7 });
    expect(made.pipe!.retentionDays).toBe(7);
  });

  it("refuses retention_days below 0 or above 3650, naming the field", async () => {
    const { organizationId, pipeId } = await newPipe();
    const refused = {
      code: "InvalidArgument",
      reason: "invalid_argument",
      metadata: { field: "retention_days" },
      message: "retention_days must be 0 (keep every run) to 3650",
    };
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, retentionDays: 3651 }))).toEqual(refused);
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, retentionDays: -1 }))).toEqual(refused);
    expect(await failure(pipes.createPipe({ organizationId, workspaceId: "", name: "Too long", retentionDays: 4000 }))).toEqual(refused);
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.retentionDays).toBe(0);
  });

  it("saves a new pipeline as the next version and keeps the older ones readable", async () => {
    const { organizationId, pipeId, pipe: created } = await newPipe();
    const next: PipelineInit = { nodes: [{ id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["docx"], maxSizeMb: 5 } } }] };
    const { pipe } = await pipes.updatePipe({ organizationId, pipeId, pipeline: next });
    expect(pipe!.pipelineVersion).toBe(2);
    expect(pipe!.pipeline!.nodes.map((node) => node.id)).toEqual(["in"]);
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe).toEqual(pipe);
    const first = await pipes.getPipelineVersion({ organizationId, pipeId, version: 1 });
    expect(first.pipelineVersion).toMatchObject({ pipeId, version: 1, pipeline: created.pipeline });
    const second = await pipes.getPipelineVersion({ organizationId, pipeId, version: 2 });
    expect(second.pipelineVersion).toMatchObject({ pipeId, version: 2, pipeline: pipe!.pipeline });
  });

  it("refuses text PostgreSQL cannot hold (a NUL) with invalid_pipeline naming the field, and saves no version", async () => {
    const { organizationId, pipeId } = await newPipe();
    const classify = (keywords: string[], headers: Record<string, string> = {}): PipelineInit => ({
      nodes: [
        ...runnable.nodes!,
        { id: "classify", kind: { case: "classify", value: { classes: [{ name: "invoice", rules: [{ keywords }] }] } } },
        { id: "notify", kind: { case: "callback", value: { url: "https://hooks.example.com/in", headers } } },
      ],
    });
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, pipeline: classify(["invoice", "In\u0000voice"]) }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_pipeline",
      metadata: { field: "pipeline.nodes[2].classify.classes[0].rules[0].keywords[1]" },
    });
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, pipeline: classify(["invoice"], { "x-token": "v\u0000" }) }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_pipeline",
      metadata: { field: "pipeline.nodes[3].callback.headers.x-token" },
    });
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.pipelineVersion).toBe(1);
  });

  it("rejects an invalid pipeline with invalid_pipeline and saves no version", async () => {
    const { organizationId, pipeId } = await newPipe();
    const pipeline: PipelineInit = { nodes: [{ kind: { case: "parse", value: {} } }] };
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, name: "renamed", pipeline }))).toMatchObject({
      code: "InvalidArgument",
      reason: "invalid_pipeline",
      metadata: { field: "pipeline.nodes[0]" },
    });
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe).toMatchObject({ name: "Invoices", pipelineVersion: 1 });
  });

  it("refuses to give an active pipe a pipeline that cannot run", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, pipeline: {} }))).toMatchObject({
      code: "FailedPrecondition",
      reason: "pipeline_not_runnable",
    });
  });

  it("numbers concurrent saves one after another, never twice the same version", async () => {
    const { organizationId, pipeId } = await newPipe();
    const saves = Array.from({ length: 8 }, (_, i) =>
      pipes.updatePipe({
        organizationId,
        pipeId,
        pipeline: { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: i + 1 } } }] },
      }),
    );
    const versions = (await Promise.all(saves)).map((response) => response.pipe!.pipelineVersion);
    expect(versions.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.pipelineVersion).toBe(9);
  });
});

describe("GetPipelineVersion", () => {
  it("returns NotFound pipeline_version_not_found for a version that was never saved", async () => {
    const { organizationId, pipeId } = await newPipe();
    for (const version of [0, 2, -1]) {
      expect(await failure(pipes.getPipelineVersion({ organizationId, pipeId, version }))).toMatchObject({
        code: "NotFound",
        reason: "pipeline_version_not_found",
      });
    }
  });

  it("returns NotFound pipe_not_found for an unknown pipe", async () => {
    const { organizationId } = await newOrganization();
    expect(await failure(pipes.getPipelineVersion({ organizationId, pipeId: MISSING_ID, version: 1 }))).toMatchObject({
      code: "NotFound",
      reason: "pipe_not_found",
    });
  });
});

describe("ListPipelineVersions", () => {
  it("lists every saved version newest first, page by page, each as GetPipelineVersion returns it", async () => {
    const { organizationId, pipeId } = await newPipe();
    for (const maxSizeMb of [5, 6]) {
      const pipeline: PipelineInit = { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb } } }] };
      await pipes.updatePipe({ organizationId, pipeId, pipeline });
    }
    const versions = [];
    let pageToken = "";
    do {
      const page = await pipes.listPipelineVersions({ organizationId, pipeId, pageSize: 2, pageToken });
      expect(page.pipelineVersions.length).toBeLessThanOrEqual(2);
      versions.push(...page.pipelineVersions);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(versions.map((version) => version.version)).toEqual([3, 2, 1]);
    for (const version of versions) {
      expect(version).toEqual((await pipes.getPipelineVersion({ organizationId, pipeId, version: version.version })).pipelineVersion);
    }
  });

  it("returns NotFound pipe_not_found for an unknown or deleted pipe, and refuses another pipe's page token", async () => {
    const { organizationId, pipeId } = await newPipe();
    await pipes.updatePipe({ organizationId, pipeId, pipeline: runnable });
    const { nextPageToken } = await pipes.listPipelineVersions({ organizationId, pipeId, pageSize: 1 });
    const other = await newPipe({ organizationId });
    expect(await failure(pipes.listPipelineVersions({ organizationId, pipeId: other.pipeId, pageToken: nextPageToken }))).toMatchObject({
      code: "InvalidArgument",
      reason: "page_token_invalid",
    });
    await pipes.deletePipe({ organizationId, pipeId });
    for (const id of [pipeId, MISSING_ID]) {
      expect(await failure(pipes.listPipelineVersions({ organizationId, pipeId: id }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
    }
  });
});

describe("ActivatePipe and PausePipe", () => {
  it("refuses to activate an empty pipeline with FailedPrecondition pipeline_not_runnable", async () => {
    const { organizationId, pipeId } = await newPipe({ pipeline: {} });
    expect(await failure(pipes.activatePipe({ organizationId, pipeId }))).toMatchObject({
      code: "FailedPrecondition",
      reason: "pipeline_not_runnable",
      metadata: { field: "pipeline.nodes" },
    });
    expect((await pipes.getPipe({ organizationId, pipeId })).pipe!.state).toBe(PipeState.PAUSED);
  });

  it("refuses to activate a pipeline that no longer fits the operator's limits", async () => {
    const roomy = inMemory(testDeps(db, { MAX_SIZE_MB_LIMIT: "500" }));
    const strict = inMemory(testDeps(db, { MAX_SIZE_MB_LIMIT: "20" }));
    const pipeline: PipelineInit = { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 50 } } }] };
    const { organizationId, pipeId } = await newPipe({ api: roomy, pipeline });
    expect(await failure(strict.activatePipe({ organizationId, pipeId }))).toMatchObject({
      code: "FailedPrecondition",
      reason: "pipeline_not_runnable",
      metadata: { field: "pipeline.nodes[0].http_trigger.max_size_mb" },
    });
  });

  it("activates and pauses idempotently, changing update_time only when the state changes", async () => {
    let time = new Date("2030-01-01T00:00:00Z");
    const api = inMemory(testDeps(db, {}, () => time));
    const { organizationId, pipeId } = await newPipe({ api });
    const tick = () => (time = new Date(time.getTime() + 1000));
    tick();
    const activated = (await api.activatePipe({ organizationId, pipeId })).pipe!;
    tick();
    const again = (await api.activatePipe({ organizationId, pipeId })).pipe!;
    expect(activated.state).toBe(PipeState.ACTIVE);
    expect(again).toEqual(activated);
    tick();
    const paused = (await api.pausePipe({ organizationId, pipeId })).pipe!;
    tick();
    expect(paused.state).toBe(PipeState.PAUSED);
    expect(paused.updateTime).not.toEqual(activated.updateTime);
    expect((await api.pausePipe({ organizationId, pipeId })).pipe).toEqual(paused);
  });

  it("pausing stops ResolveTrigger at once, activating again restores it", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    expect((await pipes.resolveTrigger({ organizationId, pipeId })).pipeId).toBe(pipeId);
    await pipes.pausePipe({ organizationId, pipeId });
    expect(await failure(pipes.resolveTrigger({ organizationId, pipeId }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
    await pipes.activatePipe({ organizationId, pipeId });
    expect((await pipes.resolveTrigger({ organizationId, pipeId })).pipeId).toBe(pipeId);
  });
});

describe("DeletePipe", () => {
  it("deletes the pipe: every later RPC on it is NotFound, ResolveTrigger too, and the row is kept", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    const deleted = await pipes.deletePipe({ organizationId, pipeId });
    expect(isMessage(deleted, DeletePipeResponseSchema)).toBe(true);
    expect((await pipes.listPipes({ organizationId })).pipes.map((pipe) => pipe.id)).not.toContain(pipeId);
    const notFound = { code: "NotFound", reason: "pipe_not_found" };
    expect(await failure(pipes.getPipe({ organizationId, pipeId }))).toMatchObject(notFound);
    expect(await failure(pipes.updatePipe({ organizationId, pipeId, name: "x" }))).toMatchObject(notFound);
    expect(await failure(pipes.getPipelineVersion({ organizationId, pipeId, version: 1 }))).toMatchObject(notFound);
    expect(await failure(pipes.activatePipe({ organizationId, pipeId }))).toMatchObject(notFound);
    expect(await failure(pipes.pausePipe({ organizationId, pipeId }))).toMatchObject(notFound);
    expect(await failure(pipes.deletePipe({ organizationId, pipeId }))).toMatchObject(notFound);
    expect(await failure(pipes.resolveTrigger({ organizationId, pipeId }))).toMatchObject(notFound);
    const row = await db.selectFrom("pipes").select("delete_time").where("id", "=", pipeId).executeTakeFirstOrThrow();
    expect(row.delete_time).toBeInstanceOf(Date);
  });
});

describe("ResolveTrigger", () => {
  it("concurrent calls for a paused pipe all get pipe_not_found, those sharing another call's read too", async () => {
    const { organizationId, pipeId } = await newPipe({ active: false });
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => failure(pipes.resolveTrigger({ organizationId, pipeId }))));
    expect(outcomes).toEqual(Array(5).fill(expect.objectContaining({ code: "NotFound", reason: "pipe_not_found" })));
  });

  it("returns the trigger settings, workspace and current version of an active pipe in the default workspace", async () => {
    const { organizationId, pipeId, defaultWorkspaceId } = await newPipe({ active: true });
    const resolved = await pipes.resolveTrigger({ organizationId, pipeId });
    expect(resolved).toMatchObject({
      pipeId,
      workspaceId: defaultWorkspaceId,
      pipelineVersion: 1,
      trigger: { allowedOrigins: ["https://app.example.com"], acceptedFormats: ["pdf", "png"], maxSizeMb: 25 },
    });
    expect((await pipes.resolveTrigger({ organizationId, workspaceId: defaultWorkspaceId, pipeId })).pipeId).toBe(pipeId);
  });

  it("follows the current pipeline version", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    await pipes.updatePipe({
      organizationId,
      pipeId,
      pipeline: { nodes: [{ kind: { case: "httpTrigger", value: { acceptedFormats: ["csv"], maxSizeMb: 1 } } }] },
    });
    expect(await pipes.resolveTrigger({ organizationId, pipeId })).toMatchObject({
      pipelineVersion: 2,
      trigger: { allowedOrigins: [], acceptedFormats: ["csv"], maxSizeMb: 1 },
    });
  });

  it("finds a pipe of another workspace only when that workspace is named", async () => {
    const { organizationId, otherWorkspaceId, defaultWorkspaceId } = await newOrganization();
    const { pipeId } = await newPipe({ organizationId, workspaceId: otherWorkspaceId, active: true });
    expect((await pipes.resolveTrigger({ organizationId, workspaceId: otherWorkspaceId, pipeId })).workspaceId).toBe(otherWorkspaceId);
    for (const workspaceId of ["", defaultWorkspaceId]) {
      expect(await failure(pipes.resolveTrigger({ organizationId, workspaceId, pipeId }))).toEqual({
        code: "NotFound",
        reason: "pipe_not_found",
        metadata: {},
        message: "pipe not found, not active, or without an HTTP trigger",
      });
    }
  });

  it("returns pipe_not_found for a paused, unknown or malformed pipe id", async () => {
    const { organizationId, pipeId } = await newPipe();
    for (const id of [pipeId, MISSING_ID, "../etc/passwd", ""]) {
      expect(await failure(pipes.resolveTrigger({ organizationId, pipeId: id }))).toMatchObject({
        code: "NotFound",
        reason: "pipe_not_found",
        message: "pipe not found, not active, or without an HTTP trigger",
      });
    }
  });

  it("returns pipe_not_found for an active pipe whose current pipeline has no http_trigger first", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    // Not reachable through the API (validation keeps the trigger first); the lookup must not trust that alone.
    await db
      .insertInto("pipeline_versions")
      .values({ pipe_id: pipeId, version: 2, pipeline: JSON.stringify({ nodes: [{ id: "p", parse: {} }] }) })
      .execute();
    await db.updateTable("pipes").set({ pipeline_version: 2 }).where("id", "=", pipeId).execute();
    expect(await failure(pipes.resolveTrigger({ organizationId, pipeId }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
  });

  it("rejects a malformed workspace id with InvalidArgument workspace_id_invalid", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    expect(await failure(pipes.resolveTrigger({ organizationId, workspaceId: "not-a-uuid", pipeId }))).toMatchObject({
      code: "InvalidArgument",
      reason: "workspace_id_invalid",
      metadata: { field: "workspace_id" },
    });
  });

  it("returns workspace_not_found for an unknown or deleted workspace, and pipe_not_found for the pipes in it", async () => {
    const { organizationId, otherWorkspaceId } = await newOrganization();
    const { pipeId } = await newPipe({ organizationId, workspaceId: otherWorkspaceId, active: true });
    expect(await failure(pipes.resolveTrigger({ organizationId, workspaceId: MISSING_ID, pipeId }))).toMatchObject({
      code: "NotFound",
      reason: "workspace_not_found",
    });
    await deleteWorkspaceRow(otherWorkspaceId);
    expect(await failure(pipes.resolveTrigger({ organizationId, workspaceId: otherWorkspaceId, pipeId }))).toMatchObject({
      code: "NotFound",
      reason: "workspace_not_found",
    });
    expect(await failure(pipes.resolveTrigger({ organizationId, pipeId }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
  });

  it("makes exactly one database query", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    let queries = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => (queries++, args.node),
      transformResult: async (args) => args.result,
    };
    const counted = inMemory(testDeps(db.withPlugin(counter)));
    await counted.resolveTrigger({ organizationId, pipeId });
    expect(queries).toBe(1);
  });

  it("works over HTTP/2, with the ErrorInfo of a NotFound intact", async () => {
    const { organizationId, pipeId } = await newPipe({ active: true });
    const server = createServer(connectNodeAdapter({ routes: inProcessRoutes(testDeps(db)) }));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sessionManager = new Http2SessionManager(baseUrl);
    try {
      const remote = createClient(TriggerService, createConnectTransport({ baseUrl, httpVersion: "2", sessionManager }));
      expect((await remote.resolveTrigger({ organizationId, pipeId })).trigger?.acceptedFormats).toEqual(["pdf", "png"]);
      expect(await failure(remote.resolveTrigger({ organizationId, pipeId: MISSING_ID }))).toMatchObject({ code: "NotFound", reason: "pipe_not_found" });
    } finally {
      sessionManager.abort();
      server.close();
    }
  });
});

describe("organization scope", () => {
  it("answers every RPC about another organization's pipe or workspace with NotFound", async () => {
    const owner = await newPipe({ active: true });
    const { pipeId } = owner;
    const ownerWorkspace = owner.defaultWorkspaceId!;
    const intruder = (await newOrganization()).organizationId;
    const attempts: Record<string, () => Promise<unknown>> = {
      createPipe: () => pipes.createPipe({ organizationId: intruder, workspaceId: ownerWorkspace, name: "sneaky" }),
      getPipe: () => pipes.getPipe({ organizationId: intruder, pipeId }),
      listPipes: () => pipes.listPipes({ organizationId: intruder, workspaceId: ownerWorkspace }),
      updatePipe: () => pipes.updatePipe({ organizationId: intruder, pipeId, name: "taken over", pipeline: {} }),
      getPipelineVersion: () => pipes.getPipelineVersion({ organizationId: intruder, pipeId, version: 1 }),
      activatePipe: () => pipes.activatePipe({ organizationId: intruder, pipeId }),
      pausePipe: () => pipes.pausePipe({ organizationId: intruder, pipeId }),
      deletePipe: () => pipes.deletePipe({ organizationId: intruder, pipeId }),
      resolveTrigger: () => pipes.resolveTrigger({ organizationId: intruder, pipeId }),
      resolveTriggerInOwnersWorkspace: () => pipes.resolveTrigger({ organizationId: intruder, workspaceId: ownerWorkspace, pipeId }),
    };
    for (const [rpc, attempt] of Object.entries(attempts)) {
      expect({ rpc, ...(await failure(attempt())) }).toMatchObject({ rpc, code: "NotFound" });
    }
    expect((await pipes.listPipes({ organizationId: intruder })).pipes).toEqual([]);
    const untouched = (await pipes.getPipe({ organizationId: owner.organizationId, pipeId })).pipe!;
    expect(untouched).toMatchObject({ name: "Invoices", state: PipeState.ACTIVE, pipelineVersion: 1 });
  });
});
