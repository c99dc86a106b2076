import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { type Kysely, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { NodeType, RunStatus, StepStatus } from "../../gen/docpipe/v1/run_pb.js";
import { type StoredFile, StoredFileSchema, type TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import type { Database } from "../../src/data/db/schema.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { newId } from "../../src/platform/ids.ts";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_WINDOW_MS } from "../../src/api/trigger-service.ts";
import { inMemoryClients } from "../support/services.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";

let db: Kysely<Database>;

beforeAll(async () => {
  db = await testDatabase();
});

const START = new Date("2026-11-22T10:00:00.123Z");
const SHA256 = "a".repeat(64);

/** A client on its own service instance with a clock the test moves, and a fresh organization. */
async function setup() {
  const clock = { now: START };
  const notified = { count: 0 };
  const deps = { ...testDeps(db, {}, () => clock.now), runsQueued: { queued: () => void notified.count++ } };
  const { runs, trigger } = inMemoryClients(deps);
  // Run management and run creation (TriggerService) on one client, as the tests use them together.
  const client = { ...runs, ...trigger };
  const org = await insertOrganization();
  return {
    client,
    org,
    /** How many times the service told the workers that runs were queued. */
    notified,
    advance(ms: number) {
      clock.now = new Date(clock.now.getTime() + ms);
    },
  };
}

interface Organization {
  id: string;
  workspaceId: string;
  pipeId: string;
}

async function insertOrganization(): Promise<Organization> {
  const id = newId();
  await db.insertInto("organizations").values({ id, name: "Acme", plan: "free" }).execute();
  const workspaceId = newId();
  await db.insertInto("workspaces").values({ id: workspaceId, organization_id: id, name: "Default", is_default: true }).execute();
  return { id, workspaceId, pipeId: await insertPipe(id, workspaceId) };
}

async function insertPipe(organizationId: string, workspaceId: string): Promise<string> {
  const id = newId();
  await db
    .insertInto("pipes")
    .values({ id, organization_id: organizationId, workspace_id: workspaceId, name: "Invoices", state: "active", pipeline_version: 1 })
    .execute();
  await db
    .insertInto("pipeline_versions")
    .values({ pipe_id: id, version: 1, pipeline: JSON.stringify({ nodes: [] }) })
    .execute();
  return id;
}

function storedFile(fields: Partial<StoredFile> = {}): StoredFile {
  return create(StoredFileSchema, { name: "invoice.pdf", contentType: "application/pdf", format: "pdf", size: 1234n, sha256: SHA256, ...fields });
}

async function createRun(client: Client<typeof TriggerService>, org: Organization, fields: { pipeId?: string; idempotencyKey?: string } = {}) {
  const response = await client.createRun({
    organizationId: org.id,
    pipeId: fields.pipeId ?? org.pipeId,
    pipelineVersion: 1,
    file: storedFile(),
    idempotencyKey: fields.idempotencyKey ?? "",
  });
  return response.run!;
}

async function expectError(call: Promise<unknown>, code: Code, reason: string, metadata?: Record<string, string>): Promise<void> {
  const error = await connectErrorOf(call);
  expect(Code[error.code]).toBe(Code[code]);
  const info = errorInfoOf(error);
  expect(info?.reason).toBe(reason);
  if (metadata !== undefined) expect(info?.metadata).toMatchObject(metadata);
}

async function countRows(table: "runs" | "files", organizationId: string): Promise<number> {
  const rows = await db.selectFrom(table).select("id").where("organization_id", "=", organizationId).execute();
  return rows.length;
}

async function setRunStatus(runId: string, status: "running" | "completed" | "failed" | "cancelled") {
  await db
    .updateTable("runs")
    .set({ status, lease_owner: "worker-1", lease_expire_time: new Date(START.getTime() + 60_000) })
    .where("id", "=", runId)
    .execute();
}

describe("CreateRuns", () => {
  const createRuns = (client: Client<typeof TriggerService>, org: Organization, files: StoredFile[]) =>
    client.createRuns({
      organizationId: org.id,
      pipeId: org.pipeId,
      pipelineVersion: 1,
      files,
      email: { sender: "ap@supplier.example", subject: "Invoices", messageId: "m-1@supplier.example" },
    });

  it("records each file and queues a run for it, in the files' order, with the message they came in; tells the workers once", async () => {
    const { client, org, notified } = await setup();
    const { runs } = await createRuns(client, org, [storedFile({ name: "a.pdf" }), storedFile({ name: "b.pdf" })]);
    expect(runs.map((run) => [run.status, run.file?.name])).toEqual([
      [RunStatus.QUEUED, "a.pdf"],
      [RunStatus.QUEUED, "b.pdf"],
    ]);
    const rows = await db.selectFrom("runs").select(["id", "email"]).where("organization_id", "=", org.id).execute();
    expect(rows.map((row) => row.email)).toEqual([
      { sender: "ap@supplier.example", subject: "Invoices", messageId: "m-1@supplier.example" },
      { sender: "ap@supplier.example", subject: "Invoices", messageId: "m-1@supplier.example" },
    ]);
    expect(notified.count).toBe(1);
  });

  it("refuses no files, more than 1000, and a bad file anywhere (naming it): InvalidArgument, nothing written", async () => {
    const { client, org } = await setup();
    await expectError(createRuns(client, org, []), Code.InvalidArgument, "invalid_argument", { field: "files" });
    await expectError(
      createRuns(
        client,
        org,
        Array.from({ length: 1001 }, () => storedFile()),
      ),
      Code.InvalidArgument,
      "invalid_argument",
      { field: "files" },
    );
    await expectError(createRuns(client, org, [storedFile(), storedFile({ sha256: "x" })]), Code.InvalidArgument, "invalid_argument", {
      field: "files[1].sha256",
    });
    expect(await countRows("runs", org.id)).toBe(0);
    expect(await countRows("files", org.id)).toBe(0);
  });

  it("writes every run or none: a failure on the second file's row rolls back the first's", async () => {
    const { client, org } = await setup();
    const poison = `poison-${newId()}.pdf`;
    await sql`create function refuse_poison() returns trigger language plpgsql as $$ begin
      if new.name like 'poison-%' then raise exception 'refused for the test'; end if; return new; end $$`.execute(db);
    await sql`create trigger refuse_poison before insert on files for each row execute function refuse_poison()`.execute(db);
    try {
      const error = await connectErrorOf(createRuns(client, org, [storedFile({ name: "a.pdf" }), storedFile({ name: poison })]));
      expect(Code[error.code]).toBe(Code[Code.Internal]);
    } finally {
      await sql`drop trigger refuse_poison on files`.execute(db);
      await sql`drop function refuse_poison()`.execute(db);
    }
    expect(await countRows("runs", org.id)).toBe(0);
    expect(await countRows("files", org.id)).toBe(0);
  });
});

describe("CreateRun", () => {
  it("records the file and queues a run in the pipe's workspace", async () => {
    const { client, org } = await setup();
    const run = await createRun(client, org);
    expect(run.status).toBe(RunStatus.QUEUED);
    expect(run.organizationId).toBe(org.id);
    expect(run.workspaceId).toBe(org.workspaceId);
    expect(run.pipeId).toBe(org.pipeId);
    expect(run.pipelineVersion).toBe(1);
    expect(timestampDate(run.createTime!)).toEqual(START);
    expect(run.startTime).toBeUndefined();
    expect(run.file).toMatchObject({ name: "invoice.pdf", contentType: "application/pdf", format: "pdf", size: 1234n, sha256: SHA256 });
    const row = await db.selectFrom("runs").selectAll().where("id", "=", run.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "queued", file_id: run.file!.id, api_key_id: null, create_time: START });
    expect(await countRows("files", org.id)).toBe(1);
  });

  it("stores a file name with quotes and a size past 2^53 exactly", async () => {
    const { client, org } = await setup();
    const size = 2n ** 60n + 1n;
    const { run } = await client.createRun({
      organizationId: org.id,
      pipeId: org.pipeId,
      pipelineVersion: 1,
      file: storedFile({ name: 'in"voice" q\'s.pdf', size }),
    });
    const row = await db.selectFrom("files").select(["name", "size"]).where("id", "=", run!.file!.id).executeTakeFirstOrThrow();
    expect(row).toEqual({ name: 'in"voice" q\'s.pdf', size: String(size) });
  });

  // What the edge, the email trigger and the console never pass on: an internal caller may not store it either.
  it.each([
    ["empty", ""],
    ["a NUL", "in\u0000voice.pdf"],
    ["a line break", "invoice\n.pdf"],
    ["a folder", "reports/q3.pdf"],
    ["a Windows folder", "reports\\q3.pdf"],
    ["only dots", ".."],
    ["256 bytes", `${"é".repeat(126)}.pdf`],
  ])("refuses a file name that is %s with InvalidArgument file_name_invalid, on CreateRun and CreateRuns, writing nothing", async (_what, name) => {
    const { client, org } = await setup();
    const run = { organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1 };
    await expectError(client.createRun({ ...run, file: storedFile({ name }) }), Code.InvalidArgument, "file_name_invalid", { field: "file.name" });
    await expectError(client.createRuns({ ...run, files: [storedFile(), storedFile({ name })] }), Code.InvalidArgument, "file_name_invalid", {
      field: "files[1].name",
    });
    expect(await countRows("files", org.id)).toBe(0);
  });

  it("takes a file name of 255 bytes in UTF-8", async () => {
    const { client, org } = await setup();
    const name = `${"é".repeat(125)}a.pdf`;
    expect(Buffer.byteLength(name)).toBe(255);
    const { run } = await client.createRun({ organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1, file: storedFile({ name }) });
    expect(run!.file!.name).toBe(name);
  });

  it("tells the workers once per created run, and never for a refused one", async () => {
    const { client, org, notified } = await setup();
    await createRun(client, org);
    expect(notified.count).toBe(1);
    await createRun(client, org, { idempotencyKey: "k-1" });
    expect(notified.count).toBe(2);
    await expectError(createRun(client, org, { idempotencyKey: "k-1" }), Code.AlreadyExists, "idempotency_key_in_flight");
    await expectError(createRun(client, org, { pipeId: newId() }), Code.NotFound, "pipe_not_found");
    expect(notified.count).toBe(2);
  });

  it("refuses a pipe that was paused or deleted since the edge resolved it: NotFound, and nothing written", async () => {
    const { client, org } = await setup();
    await db.updateTable("pipes").set({ state: "paused" }).where("id", "=", org.pipeId).execute();
    await expectError(createRun(client, org), Code.NotFound, "pipe_not_found");
    await db.updateTable("pipes").set({ state: "active", delete_time: new Date() }).where("id", "=", org.pipeId).execute();
    await expectError(createRun(client, org), Code.NotFound, "pipe_not_found");
    expect(await countRows("runs", org.id)).toBe(0);
    expect(await countRows("files", org.id)).toBe(0);
  });

  it("records the API key that submitted the document", async () => {
    const { client, org } = await setup();
    const apiKeyId = newId();
    await db
      .insertInto("api_keys")
      .values({ id: apiKeyId, organization_id: org.id, name: "ci", digest: Buffer.from(apiKeyId), hint: "dp_…abcd", permissions: [], state: "active" })
      .execute();
    const { run } = await client.createRun({ organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1, file: storedFile(), apiKeyId });
    const row = await db.selectFrom("runs").select("api_key_id").where("id", "=", run!.id).executeTakeFirstOrThrow();
    expect(row.api_key_id).toBe(apiKeyId);
  });

  it.each([
    ["file.sha256", { file: storedFile({ sha256: "A".repeat(64) }) }],
    ["file.sha256", { file: storedFile({ sha256: "a".repeat(63) }) }],
    ["file.size", { file: storedFile({ size: 0n }) }],
    ["file.format", { file: storedFile({ format: "" }) }],
    // Not a known format id: it would become a new metrics series.
    ["file.format", { file: storedFile({ format: "pdf-x-1a" }) }],
    ["file.format", { file: storedFile({ format: "PDF" }) }],
    ["file", { file: undefined }],
    ["pipeline_version", { pipelineVersion: 0 }],
    ["api_key_id", { apiKeyId: "not-a-uuid" }],
  ])("rejects an invalid %s with InvalidArgument", async (field, fields) => {
    const { client, org } = await setup();
    const request = { organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1, file: storedFile(), ...fields };
    await expectError(client.createRun(request), Code.InvalidArgument, "invalid_argument", { field });
    expect(await countRows("files", org.id)).toBe(0);
  });

  it("rejects an invalid idempotency key with idempotency_key_invalid", async () => {
    const { client, org } = await setup();
    await expectError(createRun(client, org, { idempotencyKey: "tab\tkey" }), Code.InvalidArgument, "idempotency_key_invalid");
  });

  it("is NotFound pipe_not_found for a missing, malformed, deleted or other organization's pipe, and writes nothing", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    const deletedPipeId = await insertPipe(org.id, org.workspaceId);
    await db.updateTable("pipes").set({ delete_time: START }).where("id", "=", deletedPipeId).execute();
    for (const pipeId of [newId(), "not-a-uuid", deletedPipeId, other.pipeId]) {
      await expectError(createRun(client, org, { pipeId }), Code.NotFound, "pipe_not_found");
    }
    expect(await countRows("files", org.id)).toBe(0);
    expect(await countRows("runs", org.id)).toBe(0);
  });

  it("is NotFound for a pipeline version the pipe does not have, or an API key of another organization", async () => {
    const { client, org } = await setup();
    const base = { organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1, file: storedFile() };
    await expectError(client.createRun({ ...base, pipelineVersion: 2 }), Code.NotFound, "pipeline_version_not_found");
    await expectError(client.createRun({ ...base, apiKeyId: newId() }), Code.NotFound, "api_key_not_found");
    expect(await countRows("files", org.id)).toBe(0);
  });

  it("gives each of many submissions at once its own answer, though they are written together", async () => {
    const { client, org } = await setup();
    const pausedPipeId = await insertPipe(org.id, org.workspaceId);
    await db.updateTable("pipes").set({ state: "paused" }).where("id", "=", pausedPipeId).execute();
    const base = { organizationId: org.id, pipeId: org.pipeId, pipelineVersion: 1 };
    const calls = [
      client.createRun({ ...base, file: storedFile({ name: "a.pdf" }) }),
      client.createRun({ ...base, pipeId: pausedPipeId, file: storedFile({ name: "b.pdf" }) }),
      client.createRun({ ...base, file: storedFile({ name: "c.pdf" }) }),
      client.createRun({ ...base, pipelineVersion: 2, file: storedFile({ name: "d.pdf" }) }),
      client.createRun({ ...base, apiKeyId: newId(), file: storedFile({ name: "e.pdf" }) }),
      ...Array.from({ length: 10 }, (_, index) => client.createRun({ ...base, file: storedFile({ name: `f${index}.pdf` }) })),
    ];
    const results = await Promise.allSettled(calls);
    const reasons = results.map((result) => (result.status === "fulfilled" ? result.value.run!.file!.name : reasonOf(result.reason)));
    expect(reasons).toEqual([
      "a.pdf",
      "pipe_not_found",
      "c.pdf",
      "pipeline_version_not_found",
      "api_key_not_found",
      ...Array.from({ length: 10 }, (_, index) => `f${index}.pdf`),
    ]);
    const created = results.flatMap((result) => (result.status === "fulfilled" ? [result.value.run!] : []));
    const rows = await db
      .selectFrom("runs")
      .innerJoin("files", "files.id", "runs.file_id")
      .select(["runs.id", "files.name"])
      .where("runs.organization_id", "=", org.id)
      .execute();
    expect(new Map(rows.map((row) => [row.id, row.name]))).toEqual(new Map(created.map((run) => [run.id, run.file!.name])));
    expect(await countRows("files", org.id)).toBe(12);
  });

  it("uses up a claimed idempotency key, so a repeat returns the run", async () => {
    const { client, org } = await setup();
    expect((await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId })).claimed).toBe(true);
    const run = await createRun(client, org, { idempotencyKey: "k-1" });
    const repeat = await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    expect(repeat.claimed).toBe(false);
    expect(repeat.previousRun?.id).toBe(run.id);
    expect(repeat.previousRun?.file?.sha256).toBe(SHA256);
  });

  it("re-inserts the idempotency record when the claim was released meanwhile", async () => {
    const { client, org } = await setup();
    await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    await client.releaseIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1" });
    const run = await createRun(client, org, { idempotencyKey: "k-1" });
    const record = await db.selectFrom("idempotency_keys").selectAll().where("organization_id", "=", org.id).executeTakeFirstOrThrow();
    expect(record.run_id).toBe(run.id);
  });

  it("fails with idempotency_key_in_flight and rolls back when another run already used the key", async () => {
    const { client, org } = await setup();
    await createRun(client, org, { idempotencyKey: "k-1" });
    await expectError(createRun(client, org, { idempotencyKey: "k-1" }), Code.AlreadyExists, "idempotency_key_in_flight");
    expect(await countRows("runs", org.id)).toBe(1);
    expect(await countRows("files", org.id)).toBe(1);
  });

  it("takes over a key whose run is older than 24 hours", async () => {
    const { client, org, advance } = await setup();
    await createRun(client, org, { idempotencyKey: "k-1" });
    advance(IDEMPOTENCY_WINDOW_MS + 1);
    const run = await createRun(client, org, { idempotencyKey: "k-1" });
    const record = await db.selectFrom("idempotency_keys").selectAll().where("organization_id", "=", org.id).executeTakeFirstOrThrow();
    expect(record.run_id).toBe(run.id);
  });

  it.each([
    ["a claimed key", true],
    ["an unclaimed key", false],
  ])("lets exactly one of several concurrent submissions use %s", async (_, claimFirst) => {
    const { client, org } = await setup();
    if (claimFirst) await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => createRun(client, org, { idempotencyKey: "k-1" })));
    const created = results.filter((result) => result.status === "fulfilled");
    expect(created).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") expect(reasonOf(ConnectError.from(result.reason))).toBe("idempotency_key_in_flight");
    }
    expect(await countRows("runs", org.id)).toBe(1);
    expect(await countRows("files", org.id)).toBe(1);
  });
});

describe("GetRun", () => {
  it("returns the run with its file and its steps in order, outputs as Structs", async () => {
    const { client, org } = await setup();
    const run = await createRun(client, org);
    const stepTime = new Date(START.getTime() + 1000);
    await db
      .insertInto("run_steps")
      .values([
        {
          run_id: run.id,
          position: 1,
          node_id: "parse",
          node_type: "parse",
          status: "failed",
          start_time: stepTime,
          end_time: stepTime,
          output: null,
          error: "not a PDF",
        },
        {
          run_id: run.id,
          position: 0,
          node_id: "trigger",
          node_type: "http_trigger",
          status: "completed",
          start_time: stepTime,
          end_time: stepTime,
          output: JSON.stringify({ pages: 2, meta: { title: "x" }, tags: ["a"] }),
        },
        { run_id: run.id, position: 2, node_id: "chunks", node_type: "chunk", status: "completed", start_time: stepTime, end_time: stepTime, output: "{}" },
      ])
      .execute();
    const { run: got } = await client.getRun({ organizationId: org.id, runId: run.id });
    expect(got?.file).toEqual(run.file);
    expect(got?.steps.map((step) => step.nodeId)).toEqual(["trigger", "parse", "chunks"]);
    expect(got?.steps.map((step) => step.nodeType)).toEqual([NodeType.HTTP_TRIGGER, NodeType.PARSE, NodeType.CHUNK]);
    expect(got?.steps[0]).toMatchObject({ status: StepStatus.COMPLETED, output: { pages: 2, meta: { title: "x" }, tags: ["a"] }, error: "" });
    expect(timestampDate(got!.steps[0]!.startTime!)).toEqual(stepTime);
    expect(got?.steps[1]).toMatchObject({ status: StepStatus.FAILED, error: "not a PDF" });
    expect(got?.steps[1]?.output).toBeUndefined();
  });

  it("keeps the runs of a deleted pipe readable", async () => {
    const { client, org } = await setup();
    const run = await createRun(client, org);
    await db.updateTable("pipes").set({ delete_time: START }).where("id", "=", org.pipeId).execute();
    expect((await client.getRun({ organizationId: org.id, runId: run.id })).run?.id).toBe(run.id);
  });

  it("is NotFound run_not_found for a missing, malformed or other organization's run", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    const run = await createRun(client, org);
    await expectError(client.getRun({ organizationId: other.id, runId: run.id }), Code.NotFound, "run_not_found");
    await expectError(client.getRun({ organizationId: org.id, runId: newId() }), Code.NotFound, "run_not_found");
    await expectError(client.getRun({ organizationId: org.id, runId: "nope" }), Code.NotFound, "run_not_found");
    await expectError(client.getRun({ organizationId: "nope", runId: run.id }), Code.NotFound, "run_not_found");
  });
});

describe("ListRuns", () => {
  it("pages through the runs newest first, without steps", async () => {
    const { client, org } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createRun(client, org)).id);
    await db
      .insertInto("run_steps")
      .values({ run_id: ids[0]!, position: 0, node_id: "t", node_type: "http_trigger", status: "completed", output: null })
      .execute();
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listRuns({ organizationId: org.id, pageSize: 2, pageToken });
      expect(page.runs.length).toBeLessThanOrEqual(2);
      for (const run of page.runs) {
        expect(run.steps).toEqual([]);
        expect(run.file?.sha256).toBe(SHA256);
        seen.push(run.id);
      }
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual(ids.toReversed());
  });

  it("filters by workspace, pipe, status and creation time", async () => {
    const { client, org, advance } = await setup();
    const workspaceId = newId();
    await db.insertInto("workspaces").values({ id: workspaceId, organization_id: org.id, name: "Other" }).execute();
    const otherPipeId = await insertPipe(org.id, workspaceId);
    const first = await createRun(client, org);
    advance(60_000);
    const second = await createRun(client, org, { pipeId: otherPipeId });
    advance(60_000);
    const third = await createRun(client, org);
    await setRunStatus(third.id, "running");

    const list = async (filter: object) => (await client.listRuns({ organizationId: org.id, ...filter })).runs.map((run) => run.id);
    expect(await list({})).toEqual([third.id, second.id, first.id]);
    expect(await list({ workspaceId })).toEqual([second.id]);
    expect(await list({ pipeId: org.pipeId })).toEqual([third.id, first.id]);
    expect(await list({ status: RunStatus.RUNNING })).toEqual([third.id]);
    expect(await list({ status: RunStatus.QUEUED })).toEqual([second.id, first.id]);
    expect(await list({ createTimeAfter: second.createTime })).toEqual([third.id, second.id]);
    expect(await list({ createTimeBefore: second.createTime })).toEqual([first.id]);
    expect(await list({ createTimeAfter: first.createTime, createTimeBefore: third.createTime })).toEqual([second.id, first.id]);
  });

  it("rejects a create_time bound no date can hold with InvalidArgument", async () => {
    const { client, org } = await setup();
    for (const bound of [{ createTimeAfter: { seconds: 2n ** 62n, nanos: 0 } }, { createTimeBefore: { seconds: -(2n ** 40n), nanos: 0 } }]) {
      await expectError(client.listRuns({ organizationId: org.id, ...bound }), Code.InvalidArgument, "invalid_argument");
    }
  });

  it("never lists another organization's runs", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    await createRun(client, other);
    expect((await client.listRuns({ organizationId: org.id })).runs).toEqual([]);
    expect((await client.listRuns({ organizationId: org.id, pipeId: other.pipeId })).runs).toEqual([]);
    await expectError(client.listRuns({ organizationId: newId() }), Code.NotFound, "organization_not_found");
  });

  it("rejects a tampered page token, or one from another query, with page_token_invalid", async () => {
    const { client, org } = await setup();
    await createRun(client, org);
    await createRun(client, org);
    const { nextPageToken } = await client.listRuns({ organizationId: org.id, pageSize: 1 });
    expect(nextPageToken).not.toBe("");
    const tampered = `${Buffer.from(newId()).toString("base64url")}.${nextPageToken.split(".")[1]}`;
    await expectError(client.listRuns({ organizationId: org.id, pageToken: tampered }), Code.InvalidArgument, "page_token_invalid");
    await expectError(
      client.listRuns({ organizationId: org.id, status: RunStatus.QUEUED, pageToken: nextPageToken }),
      Code.InvalidArgument,
      "page_token_invalid",
    );
  });

  it("rejects malformed filters with InvalidArgument", async () => {
    const { client, org } = await setup();
    await expectError(client.listRuns({ organizationId: org.id, pipeId: "nope" }), Code.InvalidArgument, "invalid_argument", { field: "pipe_id" });
    await expectError(client.listRuns({ organizationId: org.id, status: 42 as RunStatus }), Code.InvalidArgument, "invalid_argument", { field: "status" });
    await expectError(client.listRuns({ organizationId: org.id, pageSize: -1 }), Code.InvalidArgument, "invalid_argument", { field: "page_size" });
  });
});

describe("CancelRun", () => {
  it.each(["queued", "running"] as const)("cancels a %s run, setting its end time and clearing its lease", async (status) => {
    const { client, org, advance } = await setup();
    const run = await createRun(client, org);
    if (status === "running") await setRunStatus(run.id, "running");
    advance(5000);
    const { run: cancelled } = await client.cancelRun({ organizationId: org.id, runId: run.id });
    expect(cancelled?.status).toBe(RunStatus.CANCELLED);
    expect(timestampDate(cancelled!.endTime!)).toEqual(new Date(START.getTime() + 5000));
    const row = await db.selectFrom("runs").selectAll().where("id", "=", run.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: "cancelled", lease_owner: null, lease_expire_time: null });
  });

  it.each(["completed", "failed", "cancelled"] as const)("is FailedPrecondition run_already_finished for a %s run", async (status) => {
    const { client, org } = await setup();
    const run = await createRun(client, org);
    await setRunStatus(run.id, status);
    await expectError(client.cancelRun({ organizationId: org.id, runId: run.id }), Code.FailedPrecondition, "run_already_finished", { status });
    const row = await db.selectFrom("runs").select("status").where("id", "=", run.id).executeTakeFirstOrThrow();
    expect(row.status).toBe(status);
  });

  it("is NotFound run_not_found for a missing or other organization's run, and changes nothing", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    const run = await createRun(client, org);
    await expectError(client.cancelRun({ organizationId: other.id, runId: run.id }), Code.NotFound, "run_not_found");
    await expectError(client.cancelRun({ organizationId: org.id, runId: "nope" }), Code.NotFound, "run_not_found");
    expect((await client.getRun({ organizationId: org.id, runId: run.id })).run?.status).toBe(RunStatus.QUEUED);
  });
});

describe("ClaimIdempotencyKey", () => {
  it.each([
    ["an empty key", ""],
    ["a key longer than 255 characters", "k".repeat(256)],
    ["a non-ASCII key", "clé"],
    ["a key with a control character", "a\nb"],
  ])("rejects %s with idempotency_key_invalid", async (_, key) => {
    const { client, org } = await setup();
    await expectError(
      client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: key, pipeId: org.pipeId }),
      Code.InvalidArgument,
      "idempotency_key_invalid",
      {
        field: "idempotency_key",
      },
    );
  });

  it("accepts a key of 255 printable characters", async () => {
    const { client, org } = await setup();
    const key = "~ ".repeat(127) + "!";
    expect((await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: key, pipeId: org.pipeId })).claimed).toBe(true);
  });

  it("is AlreadyExists idempotency_key_in_flight while the first claim is in flight, and free again after its lease", async () => {
    const { client, org, advance } = await setup();
    const claim = () => client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    expect((await claim()).claimed).toBe(true);
    advance(IDEMPOTENCY_LEASE_MS - 1);
    await expectError(claim(), Code.AlreadyExists, "idempotency_key_in_flight");
    advance(2);
    expect((await claim()).claimed).toBe(true);
    await expectError(claim(), Code.AlreadyExists, "idempotency_key_in_flight");
  });

  it("returns the previous run within 24 hours and frees the key after them", async () => {
    const { client, org, advance } = await setup();
    const run = await createRun(client, org, { idempotencyKey: "k-1" });
    const claim = () => client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    advance(IDEMPOTENCY_WINDOW_MS - 1);
    expect((await claim()).previousRun?.id).toBe(run.id);
    advance(2);
    const later = await claim();
    expect(later.claimed).toBe(true);
    expect(later.previousRun).toBeUndefined();
  });

  it("keeps each organization's keys apart", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    await createRun(client, org, { idempotencyKey: "shared" });
    const claimed = await client.claimIdempotencyKey({ organizationId: other.id, idempotencyKey: "shared", pipeId: other.pipeId });
    expect(claimed.claimed).toBe(true);
    expect(claimed.previousRun).toBeUndefined();
    await expectError(client.claimIdempotencyKey({ organizationId: other.id, idempotencyKey: "k-2", pipeId: org.pipeId }), Code.NotFound, "pipe_not_found");
  });

  it("lets exactly one of 10 concurrent claims of one key win", async () => {
    const { client, org } = await setup();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "race", pipeId: org.pipeId })),
    );
    const claimed = results.filter((result) => result.status === "fulfilled" && result.value.claimed);
    expect(claimed).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") {
        const error = ConnectError.from(result.reason);
        expect(Code[error.code]).toBe(Code[Code.AlreadyExists]);
        expect(reasonOf(error)).toBe("idempotency_key_in_flight");
      }
    }
    expect(results.filter((result) => result.status === "rejected")).toHaveLength(9);
  });
});

describe("ReleaseIdempotencyKey", () => {
  it("frees an in-flight key, idempotently", async () => {
    const { client, org } = await setup();
    const claim = () => client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1", pipeId: org.pipeId });
    await claim();
    await client.releaseIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1" });
    await client.releaseIdempotencyKey({ organizationId: org.id, idempotencyKey: "k-1" });
    expect((await claim()).claimed).toBe(true);
  });

  it("never frees a key a run has used, nor another organization's key", async () => {
    const { client, org } = await setup();
    const other = await insertOrganization();
    const run = await createRun(client, org, { idempotencyKey: "used" });
    await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "held", pipeId: org.pipeId });
    await client.releaseIdempotencyKey({ organizationId: org.id, idempotencyKey: "used" });
    await client.releaseIdempotencyKey({ organizationId: other.id, idempotencyKey: "held" });
    const repeat = await client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "used", pipeId: org.pipeId });
    expect(repeat.previousRun?.id).toBe(run.id);
    await expectError(
      client.claimIdempotencyKey({ organizationId: org.id, idempotencyKey: "held", pipeId: org.pipeId }),
      Code.AlreadyExists,
      "idempotency_key_in_flight",
    );
  });

  it("rejects an invalid key with idempotency_key_invalid", async () => {
    const { client, org } = await setup();
    await expectError(client.releaseIdempotencyKey({ organizationId: org.id, idempotencyKey: "" }), Code.InvalidArgument, "idempotency_key_invalid");
  });
});
