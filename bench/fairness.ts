import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Kysely } from "kysely";
import { loadConfig } from "../src/platform/config.ts";
import { connectDatabase } from "../src/data/db/connection.ts";
import type { Database } from "../src/data/db/schema.ts";
import { FileStore } from "../src/data/storage/file-store.ts";
import { startWorkers, type Workers } from "../src/runs/engine/worker.ts";
import { textPng } from "../test/parse/ocr-samples.ts";
import { onePagePdf } from "../test/parse/samples.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, waitForRuns } from "../test/worker/fixtures.ts";
import { createBenchDatabase } from "./support/database.ts";
import type { BenchRow } from "./support/report.ts";
import { tempStorage } from "./support/servers.ts";
import { TEST_SEALING_KEY } from "../test/support/deps.ts";

// Fairness between organizations (issue 18), in one worker process with the default settings
// (WORKER_CONCURRENCY 4, MAX_SLOTS_PER_ORGANIZATION 2, CALLBACK_CONCURRENCY 16):
// (a) another organization's one-page PDF, submitted just after one organization queued 24 different
//     scans (OCR, seconds each): its time from creation to Completed over the time the backlog takes
//     to drain (from its first run's creation to its last run's end), from database timestamps;
// (b) runs per second of one organization's 1-page PDFs while another organization's 12 callbacks
//     hang on a receiver that accepts connections and never answers, over the same without them.

const BACKLOG = 24;
const HANGING_CALLBACKS = 12;
const THROUGHPUT_RUNS = 300;
const quiet = () => {};
const log = { info: quiet, warn: quiet, error: quiet };

interface Setup {
  db: Kysely<Database>;
  url: string;
  store: FileStore;
}

function start(setup: Setup): Workers {
  const config = loadConfig({ CALLBACK_ALLOW_PRIVATE_NETWORKS: "true", SIGNING_SECRETS_KEY: TEST_SEALING_KEY });
  return startWorkers({ db: setup.db, databaseUrl: setup.url, config, store: setup.store, log });
}

async function backlogRatio(setup: Setup): Promise<{ ratio: number; otherMs: number; drainMs: number }> {
  const { db, store } = setup;
  const scans = await insertTenant(db);
  const other = await insertTenant(db);
  const scanPipe = await createPipe(db, scans, [{ id: "parse", parse: {} }]);
  const backlog: string[] = [];
  for (let i = 0; i < BACKLOG; i++) {
    const scan = textPng([`Delivery note ${i + 1}`, `Parcel ${1000 + i * 7} to dock ${i % 5}`, "Signed on receipt"]);
    backlog.push(...(await queueRuns(db, scans, scanPipe, await addFile(db, store, scans, `scan-${i}.png`, "png", scan))));
  }
  const otherPipe = await createPipe(db, other, [{ id: "parse", parse: {} }]);
  const otherFile = await addFile(db, store, other, "invoice.pdf", "pdf", onePagePdf("Invoice 2026-002 total 99.00 EUR"));
  const workers = start(setup);
  try {
    await waitForRuns(db, [backlog[0]!], ["running", "completed"], 60_000);
    const [otherRun] = await queueRuns(db, other, otherPipe, otherFile);
    const runs = await waitForRuns(db, [...backlog, otherRun!], ["completed"], 1_800_000);
    const otherRow = runs.find((run) => run.id === otherRun)!;
    const backlogRows = runs.filter((run) => run.id !== otherRun);
    const otherMs = otherRow.end_time!.getTime() - otherRow.create_time.getTime();
    const drainMs = Math.max(...backlogRows.map((run) => run.end_time!.getTime())) - Math.min(...backlogRows.map((run) => run.create_time.getTime()));
    return { ratio: otherMs / drainMs, otherMs, drainMs };
  } finally {
    await workers.stop();
  }
}

async function throughput(setup: Setup, hanging: boolean): Promise<number> {
  const { db, store } = setup;
  const parses = await insertTenant(db);
  const pipeId = await createPipe(db, parses, [{ id: "parse", parse: {} }]);
  const fileId = await addFile(db, store, parses, "one-page.pdf", "pdf", onePagePdf("Invoice 2026-001 total 1234.56 EUR"));
  // A receiver that accepts every connection and never answers.
  const held = new Set<ServerResponse>();
  const receiver = createServer((_request, response) => void held.add(response));
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const workers = start(setup);
  try {
    if (hanging) {
      const hooks = await insertTenant(db);
      await addSigningSecret(db, hooks);
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const hookPipe = await createPipe(db, hooks, [{ id: "notify", callback: { url } }]);
      const hookRuns = await queueRuns(db, hooks, hookPipe, await addFile(db, store, hooks, "x.txt", "txt", Buffer.from("hang")), HANGING_CALLBACKS);
      await waitForRuns(db, hookRuns, ["completed"], 60_000);
      const deadline = Date.now() + 60_000;
      while (held.size < HANGING_CALLBACKS) {
        if (Date.now() > deadline) throw new Error(`only ${held.size} callbacks reached the receiver`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await waitForRuns(db, await queueRuns(db, parses, pipeId, fileId, 30), ["completed"], 60_000);
    const started = performance.now();
    await waitForRuns(db, await queueRuns(db, parses, pipeId, fileId, THROUGHPUT_RUNS), ["completed"], 300_000);
    const perSecond = THROUGHPUT_RUNS / ((performance.now() - started) / 1000);
    if (hanging && held.size < HANGING_CALLBACKS) throw new Error("the hanging callbacks ended before the measure did");
    return perSecond;
  } finally {
    await workers.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}

export async function benchFairness(): Promise<BenchRow[]> {
  const database = await createBenchDatabase();
  const storage = await tempStorage();
  const db = await connectDatabase(database.url, { max: 12 });
  try {
    const store = new FileStore(storage.dir);
    await store.init();
    const setup = { db, url: database.url, store };
    const backlog = await backlogRatio(setup);
    const without = await throughput(setup, false);
    const withHanging = await throughput(setup, true);
    return [
      {
        name: `another organization's 1-page PDF: time to Completed / time one organization's backlog of ${BACKLOG} scans takes to drain`,
        value: Math.round(backlog.ratio * 1000) / 1000,
        unit: "ratio",
        target: { op: "<=", value: 0.2 },
      },
      {
        name: "  the 1-page PDF's time to Completed, and the backlog's drain",
        value: Math.round(backlog.otherMs),
        unit: `ms of ${Math.round(backlog.drainMs)} ms`,
      },
      {
        name: `runs per second of one organization while another's ${HANGING_CALLBACKS} callbacks hang on a receiver that never answers / without`,
        value: Math.round((withHanging / without) * 100) / 100,
        unit: "ratio",
        target: { op: ">=", value: 0.8 },
      },
      { name: "  runs per second with the hanging callbacks, and without", value: Math.round(withHanging), unit: `runs/s of ${Math.round(without)}` },
    ];
  } finally {
    await db.destroy();
    await storage.remove();
    await database.drop();
  }
}
