import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { sealCallbackHeaders } from "../../src/runs/pipes/credentials.ts";
import { TEST_SEALING_KEY, testSecretBox } from "../support/deps.ts";
import { newSigningSecret } from "../../src/runs/deliveries/signing-secrets.ts";
import { notifyRunsQueued } from "../../src/data/db/run-notifications.ts";
import type { Database, RunStatus } from "../../src/data/db/schema.ts";
import { newId } from "../../src/platform/ids.ts";
import { rotateSigningSecret } from "../../src/data/repositories/signing-secrets.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { loadConfig } from "../../src/platform/config.ts";
import type { TaskPool } from "../../src/documents/pool/task-pool.ts";
import { taskPoolOf } from "../../src/runs/engine/worker.ts";
import { sleep } from "../support/wait.ts";

/** Worker settings for tests: quick leases and backoff, a local receiver allowed. */
export const WORKER_ENV = {
  CALLBACK_ALLOW_PRIVATE_NETWORKS: "true",
  CALLBACK_BACKOFF_MS: "10",
  RUN_LEASE_SECONDS: "1",
  WORKER_POLL_MS: "200",
  SIGNING_SECRETS_KEY: TEST_SEALING_KEY,
};

let sharedPool: TaskPool | undefined;

/**
 * The test file's task pool, made on first use with WORKER_ENV's settings, for workers started
 * without pool settings of their own: a pool started per test costs each test its processes' start.
 */
export function sharedTaskPool(): TaskPool {
  sharedPool ??= taskPoolOf(loadConfig(WORKER_ENV));
  return sharedPool;
}

/** Ends the shared task pool: the file's afterAll, once its workers have stopped. */
export async function closeSharedTaskPool(): Promise<void> {
  const pool = sharedPool;
  sharedPool = undefined;
  await pool?.destroy();
}

export interface Tenant {
  organizationId: string;
  workspaceId: string;
}

/** A new organization with a workspace, inserted as rows (worker tests run without the services; test/support/edge.ts has createTenant over them): each test works in its own. */
export async function insertTenant(db: Kysely<Database>): Promise<Tenant> {
  const organizationId = newId();
  const workspaceId = newId();
  await db.insertInto("organizations").values({ id: organizationId, name: "worker test", plan: "free" }).execute();
  await db.insertInto("workspaces").values({ id: workspaceId, organization_id: organizationId, name: "Default", is_default: true }).execute();
  return { organizationId, workspaceId };
}

/** Gives the tenant a signing secret and returns its value. */
export async function addSigningSecret(db: Kysely<Database>, tenant: Tenant, graceSeconds = 3600): Promise<string> {
  const { value, ciphertext, hint } = newSigningSecret(testSecretBox(), tenant.organizationId);
  await rotateSigningSecret(db, { id: newId(), organizationId: tenant.organizationId, ciphertext, hint }, graceSeconds, new Date());
  return value;
}

/** A pipe whose version 1 is the trigger followed by `nodes` (proto JSON), stored as PipeService stores it (callback headers sealed). */
export async function createPipe(db: Kysely<Database>, tenant: Tenant, nodes: object[]): Promise<string> {
  const pipeId = newId();
  await db
    .insertInto("pipes")
    .values({ id: pipeId, organization_id: tenant.organizationId, workspace_id: tenant.workspaceId, name: "p", state: "active", pipeline_version: 1 })
    .execute();
  const pipeline = fromJson(PipelineSchema, { nodes: [{ id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } }, ...nodes] } as JsonValue);
  const stored = toJson(PipelineSchema, sealCallbackHeaders(pipeline, testSecretBox(), tenant.organizationId));
  await db
    .insertInto("pipeline_versions")
    .values({ pipe_id: pipeId, version: 1, pipeline: JSON.stringify(stored) })
    .execute();
  return pipeId;
}

/** A file store in a new temporary folder, and what removes it (for the caller's beforeAll to return). */
export async function tempStore(): Promise<{ store: FileStore; remove: () => Promise<void> }> {
  const store = new FileStore(await mkdtemp(join(tmpdir(), "docpipe-worker-")));
  await store.init();
  return { store, remove: () => rm(store.root, { recursive: true, force: true }) };
}

/** Stores `bytes` and records the file row; returns the file id. */
export async function addFile(db: Kysely<Database>, store: FileStore, tenant: Tenant, name: string, format: string, bytes: Buffer): Promise<string> {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  await mkdir(dirname(store.pathOf(tenant.organizationId, sha256)), { recursive: true });
  await writeFile(store.pathOf(tenant.organizationId, sha256), bytes);
  const id = newId();
  await db
    .insertInto("files")
    .values({ id, organization_id: tenant.organizationId, name, content_type: "application/octet-stream", format, size: bytes.length, sha256 })
    .execute();
  return id;
}

/** Queues `count` runs of the pipe on the file and notifies the workers, as CreateRun does; returns their ids. */
export async function queueRuns(db: Kysely<Database>, tenant: Tenant, pipeId: string, fileId: string, count = 1): Promise<string[]> {
  const rows = Array.from({ length: count }, () => ({
    id: newId(),
    organization_id: tenant.organizationId,
    workspace_id: tenant.workspaceId,
    pipe_id: pipeId,
    pipeline_version: 1,
    file_id: fileId,
    status: "queued" as const,
  }));
  await db.insertInto("runs").values(rows).execute();
  await notifyRunsQueued(db);
  return rows.map((row) => row.id);
}

/**
 * Cancels the runs a test left queued or running: a file's tests share its database, and the next
 * test's workers must find only that test's runs.
 */
export async function cancelLeftoverRuns(db: Kysely<Database>): Promise<void> {
  await db
    .updateTable("runs")
    .set({ status: "cancelled", end_time: new Date(), lease_owner: null, lease_expire_time: null })
    .where("status", "in", ["queued", "running", "awaiting_children"])
    .execute();
}

/** Waits until every run is in one of `statuses`; fails after `timeoutMs`. */
export async function waitForRuns(db: Kysely<Database>, runIds: string[], statuses: RunStatus[] = ["completed", "failed", "cancelled"], timeoutMs = 8000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Polled for statuses only (the run benchmark waits here too, while it measures); the rows once at the end.
    const runs = await db.selectFrom("runs").select("status").where("id", "in", runIds).orderBy("id").execute();
    if (runs.every((run) => statuses.includes(run.status))) {
      return db.selectFrom("runs").selectAll().where("id", "in", runIds).orderBy("id").execute();
    }
    if (Date.now() > deadline) throw new Error(`runs not ${statuses.join("/")} in time: ${runs.map((run) => run.status).join(",")}`);
    await sleep(20);
  }
}

/** The recorded steps of a run, in order. */
export function stepsOf(db: Kysely<Database>, runId: string) {
  return db.selectFrom("run_steps").selectAll().where("run_id", "=", runId).orderBy("position").execute();
}

/** A logger that keeps what it is told, for assertions (and to keep test output quiet). */
export function memoryLog() {
  const lines: { level: string; object: object; message: string }[] = [];
  const at = (level: string) => (object: object, message: string) => void lines.push({ level, object, message });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}
