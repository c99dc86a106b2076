import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Kysely } from "kysely";
import { afterEach, beforeAll, expect, it } from "vitest";
import type { Database } from "../../src/db/schema.ts";
import type { FileStore } from "../../src/storage/file-store.ts";
import { startReceiver } from "../callbacks/receiver.ts";
import { pathologicalXlsx } from "../parse/hostile-samples.ts";
import { testDatabase, testDatabaseUrl } from "../support/database.ts";
import { exitOf } from "../support/main-process.ts";
import { addFile, addSigningSecret, cancelLeftoverRuns, createPipe, createTenant, queueRuns, tempStore, waitForRuns, WORKER_ENV } from "./fixtures.ts";

const SCRIPT = fileURLToPath(new URL("./worker-process.ts", import.meta.url));

let db: Kysely<Database>;
let store: FileStore;
const receiver = await startReceiver();
const children: ChildProcess[] = [];

let databaseUrl: string;

beforeAll(async () => {
  db = await testDatabase();
  databaseUrl = await testDatabaseUrl();
  const temp = await tempStore();
  store = temp.store;
  return temp.remove;
});

afterEach(async () => {
  // Gone before their runs are cancelled, so no worker of one test outlives it.
  await Promise.all(children.splice(0).map((child) => (child.kill("SIGKILL"), exitOf(child))));
  await cancelLeftoverRuns(db);
  receiver.respond = (_delivery, response) => response.end("ok");
});

/** A worker process (Node runs the .ts directly) on this file's database; resolves once it is running. */
function spawnWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, ...WORKER_ENV, DATABASE_URL: databaseUrl, STORAGE_DIR: store.root, WORKER_CONCURRENCY: "4", MAX_SLOTS_PER_ORGANIZATION: "4" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
    child.stdout!.once("data", () => resolve(child));
  });
}

/** runId -> number of callback deliveries the receiver got for it. */
function deliveriesByRun(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delivery of receiver.deliveries) {
    const runId = JSON.parse(delivery.body).runId as string;
    counts.set(runId, (counts.get(runId) ?? 0) + 1);
  }
  return counts;
}

it("two worker processes on one database execute each of 200 queued runs exactly once", async () => {
  const tenant = await createTenant(db);
  await addSigningSecret(db, tenant);
  receiver.deliveries.length = 0;
  const pipeId = await createPipe(db, tenant, [
    { id: "parse", parse: {} },
    { id: "notify", callback: { url: receiver.url } },
  ]);
  const fileId = await addFile(db, store, tenant, "n.txt", "txt", Buffer.from(`two processes ${tenant.organizationId}`));
  await Promise.all([spawnWorker(), spawnWorker()]);
  const runIds = await queueRuns(db, tenant, pipeId, fileId, 200);
  const runs = await waitForRuns(db, runIds, ["completed", "failed"], 15_000);
  expect(runs.every((run) => run.status === "completed" && run.attempts === 1)).toBe(true);
  const steps = await db
    .selectFrom("run_steps")
    .select(({ fn }) => ["run_id", fn.countAll<string>().as("count")])
    .where("run_id", "in", runIds)
    .groupBy("run_id")
    .execute();
  expect(steps.map((row) => Number(row.count))).toEqual(Array(200).fill(3));
  await expect.poll(() => deliveriesByRun().size, { timeout: 15_000 }).toBe(200);
  const deliveries = deliveriesByRun();
  expect(deliveries.size).toBe(200);
  expect([...deliveries.values()].every((count) => count === 1)).toBe(true);
}, 30_000);

it("after a worker process is SIGKILLed mid-run, another completes every run once the leases expire", async () => {
  const tenant = await createTenant(db);
  await addSigningSecret(db, tenant);
  receiver.deliveries.length = 0;
  const pipeId = await createPipe(db, tenant, [
    { id: "parse", parse: {} },
    { id: "notify", callback: { url: receiver.url } },
  ]);
  // Slow parses (seconds each) hold the first worker's slots: it is killed holding its runs.
  const fileId = await addFile(db, store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx());
  const doomed = await spawnWorker();
  const runIds = await queueRuns(db, tenant, pipeId, fileId, 4);
  await waitForRuns(db, runIds, ["running"], 15_000);
  doomed.kill("SIGKILL");
  const held = await db.selectFrom("runs").select("id").where("id", "in", runIds).where("status", "=", "running").execute();
  expect(held).toHaveLength(4);
  await spawnWorker();
  const runs = await waitForRuns(db, runIds, ["completed", "failed"], 90_000);
  expect(runs.map((run) => run.status)).toEqual(Array(4).fill("completed"));
  expect(runs.map((run) => run.attempts)).toEqual(Array(4).fill(2));
  // Each run's callback is sent by the delivery queue once the run completed.
  await expect.poll(() => new Set(deliveriesByRun().keys()), { timeout: 15_000 }).toEqual(new Set(runIds));
}, 120_000);
