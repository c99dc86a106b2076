import { create } from "@bufbuild/protobuf";
import { sql } from "kysely";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { openCallbackHeaders, sealCallbackHeaders } from "../../src/runs/pipes/credentials.ts";
import { openHeaders } from "../../src/runs/deliveries/sealed-headers.ts";
import { sealStoredCallbackHeaders } from "../../src/api/sealed-headers-migration.ts";
import { loadConfig } from "../../src/platform/config.ts";
import { newId } from "../../src/platform/ids.ts";
import { startWorkers } from "../../src/runs/engine/worker.ts";
import { testDatabase, testDatabaseUrl } from "../support/database.ts";
import { TEST_SEALING_KEY, testDeps, testSecretBox } from "../support/deps.ts";
import { inMemoryClients } from "../support/services.ts";
import { addFile, addSigningSecret, insertTenant, memoryLog, queueRuns, tempStore, waitForRuns, WORKER_ENV } from "../worker/fixtures.ts";
import { startReceiver } from "./receiver.ts";

const SECRET = "Bearer receiver-credential-7f3a";
const box = testSecretBox();

const pipelineWith = (headers: Record<string, string>, url = "https://receiver.example/hook") =>
  create(PipelineSchema, {
    nodes: [
      { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["txt"], maxSizeMb: 1 } } },
      { id: "notify", kind: { case: "callback", value: { url, headers } } },
    ],
  });

describe("sealing callback header values", () => {
  it("seals every value (names stay readable), opens them again, and leaves the given pipeline as it was", () => {
    const pipeline = pipelineWith({ Authorization: SECRET, "X-Tenant": "t1" });
    const sealed = sealCallbackHeaders(pipeline, box, "org-a");
    const headers = (sealed.nodes[1]!.kind.value as { headers: Record<string, string> }).headers;
    expect(Object.keys(headers)).toEqual(["Authorization", "X-Tenant"]);
    expect(JSON.stringify(headers)).not.toContain("receiver-credential");
    expect(headers.Authorization).toMatch(/^dpsealed:/);
    expect((pipeline.nodes[1]!.kind.value as { headers: Record<string, string> }).headers.Authorization).toBe(SECRET);
    expect(openCallbackHeaders(sealed, box, "org-a")).toEqual(pipeline);
  });

  it("seals an HTTP request node's header values the same way", () => {
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["txt"], maxSizeMb: 1 } } },
        { id: "erp", kind: { case: "httpRequest", value: { url: '"https://erp.example/x"', headers: { Authorization: SECRET } } } },
      ],
    });
    const sealed = sealCallbackHeaders(pipeline, box, "org-a");
    const headers = (sealed.nodes[1]!.kind.value as { headers: Record<string, string> }).headers;
    expect(headers.Authorization).toMatch(/^dpsealed:/);
    expect(JSON.stringify(sealed)).not.toContain("receiver-credential");
    expect(openCallbackHeaders(sealed, box, "org-a")).toEqual(pipeline);
  });

  it("a sealed value does not open for another organization", () => {
    const sealed = sealCallbackHeaders(pipelineWith({ Authorization: SECRET }), box, "org-a");
    expect(() => openCallbackHeaders(sealed, box, "org-b")).toThrow();
  });

  it("values stored before sealing began are read as they are", () => {
    expect(openHeaders({ "X-Token": "plain" }, box, "org-a")).toEqual({ "X-Token": "plain" });
  });
});

describe("PipeService stores callback headers sealed and answers them opened", () => {
  it("the database never holds the value in clear; Get, List and GetPipelineVersion return it", async () => {
    const db = await testDatabase();
    const { pipes, workspaces } = inMemoryClients(testDeps(db));
    const { organization } = await workspaces.createOrganization({ name: "sealed headers", plan: "free" });
    const organizationId = organization!.id;
    const { pipe } = await pipes.createPipe({ organizationId, workspaceId: "", name: "p", pipeline: pipelineWith({ Authorization: SECRET }) });
    const pipeId = pipe!.id;
    await pipes.updatePipe({ organizationId, pipeId, pipeline: pipelineWith({ Authorization: `${SECRET}-2` }) });

    const stored = await sql<{ text: string }>`select pipeline::text as text from pipeline_versions where pipe_id = ${pipeId}`.execute(db);
    expect(stored.rows).toHaveLength(2);
    for (const row of stored.rows) {
      expect(row.text).not.toContain("receiver-credential");
      expect(row.text).toContain("dpsealed:");
    }
    const headersOf = (value: { nodes: { kind: { value?: unknown } }[] } | undefined) =>
      (value!.nodes[1]!.kind.value as { headers: Record<string, string> }).headers;
    expect(headersOf((await pipes.getPipe({ organizationId, pipeId })).pipe!.pipeline)).toEqual({ Authorization: `${SECRET}-2` });
    expect(headersOf((await pipes.listPipes({ organizationId })).pipes[0]!.pipeline)).toEqual({ Authorization: `${SECRET}-2` });
    expect(headersOf((await pipes.getPipelineVersion({ organizationId, pipeId, version: 1 })).pipelineVersion!.pipeline)).toEqual({ Authorization: SECRET });
  });
});

const receiver = await startReceiver();

describe("the worker sends sealed callback headers opened", () => {
  let db: Awaited<ReturnType<typeof testDatabase>>;
  beforeAll(async () => {
    db = await testDatabase();
  });

  it("the receiver gets the header's value", async () => {
    const { pipes, workspaces } = inMemoryClients(testDeps(db, { CALLBACK_ALLOW_PRIVATE_NETWORKS: "true", SIGNING_SECRETS_KEY: TEST_SEALING_KEY }));
    const { organization } = await workspaces.createOrganization({ name: "sealed delivery", plan: "free" });
    const tenant = { organizationId: organization!.id, workspaceId: organization!.defaultWorkspaceId };
    const { pipe } = await pipes.createPipe({
      organizationId: tenant.organizationId,
      workspaceId: "",
      name: "p",
      pipeline: pipelineWith({ Authorization: SECRET }, receiver.url),
    });
    await addSigningSecret(db, tenant);
    const { store, remove } = await tempStore();
    onTestFinished(remove);
    const [runId] = await queueRuns(db, tenant, pipe!.id, await addFile(db, store, tenant, "note.txt", "txt", Buffer.from("hello")));
    const workers = startWorkers({
      db,
      databaseUrl: await testDatabaseUrl(),
      store,
      log: memoryLog(),
      config: loadConfig(WORKER_ENV),
    });
    try {
      const [run] = await waitForRuns(db, [runId!]);
      expect(run!.status).toBe("completed");
      // The delivery queue sends the callback once the run has completed.
      await expect.poll(() => receiver.deliveries.some((entry) => JSON.parse(entry.body).runId === runId), { timeout: 10_000 }).toBe(true);
    } finally {
      await workers.stop();
    }
    const delivery = receiver.deliveries.find((entry) => JSON.parse(entry.body).runId === runId)!;
    expect(delivery.headers.authorization).toBe(SECRET);
  });
});

describe("header values stored before sealing began", () => {
  it("are sealed at start, once; the values open as they were", async () => {
    const db = await testDatabase();
    const tenant = await insertTenant(db);
    // Written as versions were before sealing began: header values in clear.
    const pipeId = newId();
    await db
      .insertInto("pipes")
      .values({ id: pipeId, organization_id: tenant.organizationId, workspace_id: tenant.workspaceId, name: "old", state: "active", pipeline_version: 1 })
      .execute();
    const legacy = {
      nodes: [
        { id: "trigger", httpTrigger: {} },
        { id: "notify", callback: { url: "https://receiver.example/hook", headers: { Authorization: SECRET, "X-Old": "dpsealed-looking-but-not" } } },
      ],
    };
    await db
      .insertInto("pipeline_versions")
      .values({ pipe_id: pipeId, version: 1, pipeline: JSON.stringify(legacy) })
      .execute();
    const storedText = async () =>
      (await sql<{ text: string }>`select pipeline::text as text from pipeline_versions where pipe_id = ${pipeId}`.execute(db)).rows[0]!.text;
    expect(await storedText()).toContain("receiver-credential");

    expect(await sealStoredCallbackHeaders(db, box)).toBeGreaterThanOrEqual(1);
    const text = await storedText();
    expect(text).not.toContain("receiver-credential");
    expect(text).not.toContain("dpsealed-looking-but-not");
    const stored = (await sql<{ pipeline: unknown }>`select pipeline from pipeline_versions where pipe_id = ${pipeId}`.execute(db)).rows[0]!.pipeline;
    const callback = (stored as { nodes: { callback?: { headers: Record<string, string> } }[] }).nodes[1]!.callback!;
    expect(openHeaders(callback.headers, box, tenant.organizationId)).toEqual({ Authorization: SECRET, "X-Old": "dpsealed-looking-but-not" });

    // Sealed versions are not read again (other test files' versions are all sealed too).
    await sealStoredCallbackHeaders(db, box);
    expect(await storedText()).toBe(text);
  });
});
