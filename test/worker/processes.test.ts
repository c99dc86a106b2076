import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { startReceiver } from "../callbacks/receiver.ts";
import { pathologicalXlsx } from "../parse/hostile-samples.ts";
import { exitOf } from "../support/main-process.ts";
import { textPdf } from "../support/pdfs.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, waitForRuns, WORKER_ENV } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const SCRIPT = fileURLToPath(new URL("./worker-process.ts", import.meta.url));

const bed = workerBed();
const receiver = await startReceiver();
const children: ChildProcess[] = [];

afterEach(async () => {
  // Gone before their runs are cancelled (the bed's afterEach), so no worker of one test outlives it.
  await Promise.all(children.splice(0).map((child) => (child.kill("SIGKILL"), exitOf(child))));
  receiver.respond = (_delivery, response) => response.end("ok");
});

/**
 * A worker process (Node runs the .ts directly) on this file's database; resolves once it is running.
 * Its run leases last 30 s, so a machine busy enough to delay a renewal by a second cannot make a
 * live worker lose its run: the tests expire a dead worker's leases themselves.
 */
function spawnWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SCRIPT], {
    env: {
      ...process.env,
      ...WORKER_ENV,
      RUN_LEASE_SECONDS: "30",
      DATABASE_URL: bed.databaseUrl,
      STORAGE_DIR: bed.store.root,
      WORKER_CONCURRENCY: "4",
      MAX_SLOTS_PER_ORGANIZATION: "4",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`worker process exited with ${code}`)));
    child.stdout!.once("data", () => resolve(child));
  });
}

/** As if a dead worker's 30 s leases on these runs had run out. */
async function expireRunLeases(runIds: string[]): Promise<void> {
  await bed.db
    .updateTable("runs")
    .set({ lease_expire_time: new Date(Date.now() - 1000) })
    .where("id", "in", runIds)
    .where("status", "=", "running")
    .execute();
}

/** runId -> number of callback deliveries the receiver got for it. */
function deliveriesByRun(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delivery of receiver.deliveries) {
    if (delivery.method !== "POST") continue;
    const runId = JSON.parse(delivery.body).runId as string;
    counts.set(runId, (counts.get(runId) ?? 0) + 1);
  }
  return counts;
}

it("two worker processes on one database execute each of 200 queued runs exactly once", async () => {
  const tenant = await insertTenant(bed.db);
  await addSigningSecret(bed.db, tenant);
  receiver.deliveries.length = 0;
  const pipeId = await createPipe(bed.db, tenant, [
    { id: "parse", parse: {} },
    { id: "notify", callback: { url: receiver.url } },
  ]);
  const fileId = await addFile(bed.db, bed.store, tenant, "n.txt", "txt", Buffer.from(`two processes ${tenant.organizationId}`));
  await Promise.all([spawnWorker(), spawnWorker()]);
  const runIds = await queueRuns(bed.db, tenant, pipeId, fileId, 200);
  const runs = await waitForRuns(bed.db, runIds, ["completed", "failed"], 15_000);
  expect(runs.every((run) => run.status === "completed" && run.attempts === 1)).toBe(true);
  const steps = await bed.db
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

it("after a worker process is SIGKILLed mid-run, another completes every run once the leases expire, each on its second attempt", async () => {
  const tenant = await insertTenant(bed.db);
  await addSigningSecret(bed.db, tenant);
  receiver.deliveries.length = 0;
  const pipeId = await createPipe(bed.db, tenant, [
    { id: "parse", parse: {} },
    { id: "notify", callback: { url: receiver.url } },
  ]);
  // Slow parses (seconds each) hold the first worker's slots: it is killed holding its runs.
  const fileId = await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx());
  const doomed = await spawnWorker();
  const runIds = await queueRuns(bed.db, tenant, pipeId, fileId, 4);
  await waitForRuns(bed.db, runIds, ["running"], 15_000);
  doomed.kill("SIGKILL");
  await exitOf(doomed);
  const held = await bed.db.selectFrom("runs").select("id").where("id", "in", runIds).where("status", "=", "running").execute();
  expect(held).toHaveLength(4);
  await expireRunLeases(runIds);
  await spawnWorker();
  const runs = await waitForRuns(bed.db, runIds, ["completed", "failed"], 90_000);
  expect(runs.map((run) => run.status)).toEqual(Array(4).fill("completed"));
  expect(runs.map((run) => run.attempts)).toEqual(Array(4).fill(2));
  // Each run's callback is sent by the delivery queue once the run completed.
  await expect.poll(() => new Set(deliveriesByRun().keys()), { timeout: 15_000 }).toEqual(new Set(runIds));
}, 120_000);

it("a worker SIGKILLed with the callbacks its runs' ends leased to it in flight: each is sent by another once its lease expires, once, its cut-off attempt recorded", async () => {
  const tenant = await insertTenant(bed.db);
  await addSigningSecret(bed.db, tenant);
  receiver.deliveries.length = 0;
  // The first worker's attempts hang: it is killed while they are in flight.
  receiver.respond = () => {};
  const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url, timeoutSeconds: 60 } }]);
  const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("leased"));
  const doomed = await spawnWorker();
  const runIds = await queueRuns(bed.db, tenant, pipeId, fileId, 3);
  await waitForRuns(bed.db, runIds, ["completed"], 15_000);
  await expect.poll(() => receiver.deliveries.length, { timeout: 15_000 }).toBe(3);
  doomed.kill("SIGKILL");
  await exitOf(doomed);
  const leased = await bed.db.selectFrom("callback_deliveries").selectAll().where("run_id", "in", runIds).execute();
  expect(leased.map((delivery) => [delivery.status, delivery.attempts, delivery.lease_owner !== null])).toEqual(Array(3).fill(["pending", 1, true]));
  // As if the leases (60 s + 30 s) had run out.
  receiver.respond = (_delivery, response) => response.end("ok");
  await bed.db
    .updateTable("callback_deliveries")
    .set({ lease_expire_time: new Date(Date.now() - 1000) })
    .where("run_id", "in", runIds)
    .execute();
  await spawnWorker();
  await expect
    .poll(async () => (await bed.db.selectFrom("callback_deliveries").select("status").where("run_id", "in", runIds).execute()).map((row) => row.status), {
      timeout: 15_000,
    })
    .toEqual(Array(3).fill("delivered"));
  const attempts = await bed.db
    .selectFrom("callback_delivery_attempts as a")
    .innerJoin("callback_deliveries as d", "d.id", "a.delivery_id")
    .select(["a.number", "a.http_status", "a.error"])
    .where("d.run_id", "in", runIds)
    .orderBy("a.number")
    .execute();
  expect(attempts).toEqual([
    ...Array(3).fill({ number: 1, http_status: null, error: "the worker making this attempt stopped before it ended" }),
    ...Array(3).fill({ number: 2, http_status: 200, error: "" }),
  ]);
  // Three hung, then three answered: each run's callback reached the receiver once more, not twice more.
  expect([...deliveriesByRun().values()]).toEqual([2, 2, 2]);
}, 60_000);

it("a worker SIGKILLed while a parent awaits its children: another finishes the children and the parent, nothing lost, nothing done twice", async () => {
  const tenant = await insertTenant(bed.db);
  await addSigningSecret(bed.db, tenant);
  receiver.deliveries.length = 0;
  // A slow lookup (seconds per part) holds the children in the first worker's slots when it is killed.
  receiver.respond = (delivery, response) => {
    if (delivery.method === "GET") setTimeout(() => response.end("{}"), 3000);
    else response.end("ok");
  };
  const pipeId = await createPipe(bed.db, tenant, [
    { id: "cut", split: { pagesPerPart: 2 } },
    { id: "read", parse: {} },
    { id: "lookup", httpRequest: { method: "HTTP_METHOD_GET", url: `'${receiver.url}/lookup'` } },
    { id: "gather", merge: {} },
    { id: "notify", callback: { url: receiver.url } },
  ]);
  const pages = Array.from({ length: 6 }, (_, index) => `Page ${index + 1} of the bundle`);
  const fileId = await addFile(bed.db, bed.store, tenant, "bundle.pdf", "pdf", await textPdf(pages));
  const doomed = await spawnWorker();
  const [parentId] = await queueRuns(bed.db, tenant, pipeId, fileId, 1);
  await waitForRuns(bed.db, [parentId!], ["awaiting_children"], 30_000);
  const childIds = (await bed.db.selectFrom("runs").select("id").where("parent_run_id", "=", parentId!).execute()).map((row) => row.id);
  expect(childIds).toHaveLength(3);
  await waitForRuns(bed.db, childIds, ["running"], 30_000);
  doomed.kill("SIGKILL");
  await exitOf(doomed);
  await expireRunLeases(childIds);
  await spawnWorker();
  const [parent] = await waitForRuns(bed.db, [parentId!], ["completed", "failed"], 90_000);
  expect(parent!.status).toBe("completed");
  const children = await bed.db.selectFrom("runs").select(["id", "status", "error"]).where("parent_run_id", "=", parentId!).execute();
  expect(children.map((child) => `${child.status}${child.error}`)).toEqual(["completed", "completed", "completed"]);
  expect(new Set(children.map((child) => child.id))).toEqual(new Set(childIds));
  const parentSteps = await bed.db.selectFrom("run_steps").select("node_id").where("run_id", "=", parentId!).orderBy("position").execute();
  expect(parentSteps.map((step) => step.node_id)).toEqual(["trigger", "cut", "gather", "notify"]);
  await expect.poll(() => deliveriesByRun().get(parentId!), { timeout: 15_000 }).toBe(1);
  const posted = receiver.deliveries.filter((delivery) => delivery.method === "POST");
  const body = JSON.parse(posted.find((delivery) => JSON.parse(delivery.body).runId === parentId)!.body);
  expect(body.data.gather.parts.map((part: { status: string }) => part.status)).toEqual(["Completed", "Completed", "Completed"]);
  expect([...deliveriesByRun().keys()]).toEqual([parentId]);
}, 150_000);
