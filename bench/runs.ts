import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { loadConfig } from "../src/platform/config.ts";
import { connectDatabase } from "../src/data/db/connection.ts";
import { migrateToLatest } from "../src/data/db/migrate.ts";
import type { Database } from "../src/data/db/schema.ts";
import { invoicesExample } from "../src/runs/pipes/invoices-example.ts";
import { FileStore } from "../src/data/storage/file-store.ts";
import { startWorkers } from "../src/runs/engine/worker.ts";
import { PDF_INVOICE, textLayerPdf } from "../test/nodes/invoices.ts";
import { onePagePdf } from "../test/parse/samples.ts";
import type { Row } from "./authenticate-key.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, type Tenant, waitForRuns } from "../test/worker/fixtures.ts";
import { tempStorage } from "./support/servers.ts";
import { TEST_SEALING_KEY } from "../test/support/deps.ts";
import { median } from "./support/median.ts";

// Run execution in one worker process (WORKER_CONCURRENCY slots, default config): throughput of
// trigger + parse runs on a 1-page PDF, and the median time from a run's creation to completed when
// runs arrive one at a time (queued -> NOTIFY -> claim -> parse -> completed), from database timestamps.
// The overhead of a route step: the same latency through a pipeline with ROUTE_STEPS route nodes
// after the parse (each a JSONata condition over the parse output, and its step's two writes),
// less the linear one, per route step. Then throughput of a PDF invoice through the worked example
// pipe (classify, route, extract, validate, review not needed, a signed callback to a local
// receiver) over the same invoice through a parse alone, in alternating pairs of rounds, with the
// runs shared by two organizations: one organization holds at most MAX_SLOTS_PER_ORGANIZATION slots
// (half of them by default), so with one the worker runs half full and the figure measures a run's
// latency rather than the worker's throughput; that figure is shown beside it. Last, the time from a
// run's end to its callback's arrival, runs one at a time.

const THROUGHPUT_RUNS = 400;
const WARMUP_RUNS = 40;
const LATENCY_SAMPLES = 40;
const LATENCY_GAP_MS = 30;
const ROUTE_STEPS = 10;
const EXAMPLE_PAIRS = 5;
/** Pairs of the same measure with one organization, shown beside it. */
const ONE_ORGANIZATION_PAIRS = 3;

/** Trigger, parse, then ROUTE_STEPS route nodes in a chain, each taken by a condition over the parse output. */
function routedNodes(): object[] {
  const routes = Array.from({ length: ROUTE_STEPS }, (_, n) => ({
    id: `route-${n}`,
    route: { routes: [{ when: "parse.text ~> $contains('Invoice')", to: n + 1 < ROUTE_STEPS ? [`route-${n + 1}`] : [] }] },
  }));
  return [{ id: "parse", parse: {} }, ...routes];
}

/** How often a throughput round looks whether its runs have completed. */
const ROUND_POLL_MS = 100;

/**
 * Runs per second of `count` runs queued at once: waits until all have completed, then takes the
 * span from their creation to the last one's end from the database's own times, so how often the
 * wait looks does not round the figure. The wait runs in the process it measures, so it looks
 * seldom and with one aggregate (polling every 20 ms for each run's status, as waitForRuns does, made
 * about a third of what this process allocated per parse-alone run).
 */
async function roundThroughput(db: Kysely<Database>, queue: (count: number) => Promise<string[]>, count: number, timeoutMs: number): Promise<number> {
  const runIds = await queue(count);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, ROUND_POLL_MS));
    const { rows } = await sql<{ pending: number; failed: number; seconds: number | null }>`
      select count(*) filter (where status not in ('completed', 'failed', 'cancelled'))::int as pending,
        count(*) filter (where status in ('failed', 'cancelled'))::int as failed,
        extract(epoch from max(end_time) - min(create_time))::float8 as seconds
      from runs where id = any(${runIds}::uuid[])`.execute(db);
    const { pending, failed, seconds } = rows[0]!;
    if (failed > 0) throw new Error(`${failed} of ${count} runs did not complete`);
    if (pending === 0) return count / seconds!;
    if (Date.now() > deadline) throw new Error(`${pending} of ${count} runs not completed in time`);
  }
}

async function throughput(db: Kysely<Database>, queue: (count: number) => Promise<string[]>): Promise<number> {
  await roundThroughput(db, queue, WARMUP_RUNS, 60_000);
  return roundThroughput(db, queue, THROUGHPUT_RUNS, 300_000);
}

async function latencyMs(db: Kysely<Database>, queue: (count: number) => Promise<string[]>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const [runId] = await queue(1);
    await waitForRuns(db, [runId!], ["completed"], 10_000);
    const { ms } = await db
      .selectFrom("runs")
      .select(sql<number>`extract(epoch from end_time - create_time) * 1000`.as("ms"))
      .where("id", "=", runId!)
      .executeTakeFirstOrThrow();
    samples.push(Number(ms));
    await new Promise((resolve) => setTimeout(resolve, LATENCY_GAP_MS));
  }
  return median(samples);
}

/** Arrival times of callbacks at the bench's receiver, by run id. */
const arrivals = new Map<string, number>();

/**
 * The median time from a run's end (its end_time, written by the statement that ends it) to its
 * callback's arrival at a receiver on loopback, runs one at a time: parse, then a callback.
 */
async function callbackLatencyMs(db: Kysely<Database>, tenant: Tenant, fileId: string, receiverUrl: string): Promise<number> {
  const pipeId = await createPipe(db, tenant, [
    { id: "parse", parse: {} },
    { id: "notify", callback: { url: receiverUrl } },
  ]);
  const samples: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const [runId] = await queueRuns(db, tenant, pipeId, fileId, 1);
    const deadline = Date.now() + 10_000;
    while (!arrivals.has(runId!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    // In microseconds from the database; a Date keeps milliseconds only.
    const { end } = await db
      .selectFrom("runs")
      .select(sql<number>`extract(epoch from end_time) * 1000`.as("end"))
      .where("id", "=", runId!)
      .executeTakeFirstOrThrow();
    samples.push(arrivals.get(runId!)! - Number(end));
    await new Promise((resolve) => setTimeout(resolve, LATENCY_GAP_MS));
  }
  return median(samples);
}

/** One organization's copy of the invoice, a pipe that only parses it and the worked example pipe. */
interface InvoicePipes {
  tenant: Tenant;
  invoice: string;
  parseOnly: string;
  example: string;
}

async function invoicePipes(db: Kysely<Database>, store: FileStore, tenant: Tenant, receiverUrl: string): Promise<InvoicePipes> {
  await addSigningSecret(db, tenant);
  const invoice = await addFile(db, store, tenant, "invoice.pdf", "pdf", textLayerPdf(PDF_INVOICE));
  const parseOnly = await createPipe(db, tenant, [{ id: "parse", parse: {} }]);
  const [, ...exampleNodes] = invoicesExample({ accountsUrl: receiverUrl, archiveUrl: receiverUrl, allowedSenders: ["*"] }).nodes as object[];
  return { tenant, invoice, parseOnly, example: await createPipe(db, tenant, exampleNodes) };
}

/**
 * Throughput of the worked example pipe over a parse alone, on the same invoice, runs shared evenly
 * among `organizations`, in `pairs` pairs of rounds side by side, and the median of the pairs'
 * ratios: this machine's speed drifts over seconds, and the rounds of one pair see the same drift
 * (two rounds of each, summed, read anywhere from 0.61 to 0.75 for one commit).
 */
async function workedExampleOverParse(
  db: Kysely<Database>,
  organizations: readonly InvoicePipes[],
  pairs: number,
): Promise<{ ratio: number; parseRate: number; exampleRate: number }> {
  const through = (pipe: (pipes: InvoicePipes) => string) => async (count: number) => {
    const share = count / organizations.length;
    const ids = await Promise.all(organizations.map((pipes) => queueRuns(db, pipes.tenant, pipe(pipes), pipes.invoice, share)));
    return ids.flat();
  };
  const parseRates: number[] = [];
  const exampleRates: number[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    parseRates.push(
      await throughput(
        db,
        through((pipes) => pipes.parseOnly),
      ),
    );
    exampleRates.push(
      await throughput(
        db,
        through((pipes) => pipes.example),
      ),
    );
  }
  return {
    ratio: median(exampleRates.map((rate, pair) => rate / parseRates[pair]!)),
    parseRate: median(parseRates),
    exampleRate: median(exampleRates),
  };
}

export async function benchRuns(): Promise<Row[]> {
  const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const database = `docpipe_bench_runs_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const db = await connectDatabase(url.toString(), { max: 12 });
  const config = loadConfig({ CALLBACK_ALLOW_PRIVATE_NETWORKS: "true", SIGNING_SECRETS_KEY: TEST_SEALING_KEY });
  // The worked example's callbacks arrive here.
  const receiver = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      arrivals.set((JSON.parse(body) as { runId: string }).runId, performance.timeOrigin + performance.now());
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const quiet = () => {};
  let workers: { stop(): Promise<void> } | undefined;
  const storage = await tempStorage();
  try {
    await migrateToLatest(db);
    const store = new FileStore(storage.dir);
    await store.init();
    const tenant = await insertTenant(db);
    const pipeId = await createPipe(db, tenant, [{ id: "parse", parse: {} }]);
    const fileId = await addFile(db, store, tenant, "one-page.pdf", "pdf", onePagePdf("Invoice 2026-001 total 1234.56 EUR"));
    const queue = (count: number) => queueRuns(db, tenant, pipeId, fileId, count);
    workers = startWorkers({ db, databaseUrl: url.toString(), config, store, log: { info: quiet, warn: quiet, error: quiet } });
    const perSecond = await throughput(db, queue);
    const medianMs = await latencyMs(db, queue);
    const routedPipeId = await createPipe(db, tenant, routedNodes());
    const routedMs = await latencyMs(db, (count) => queueRuns(db, tenant, routedPipeId, fileId, count));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    // (It gives the tenant the signing secret callbacks need.)
    const first = await invoicePipes(db, store, tenant, receiverUrl);
    const second = await invoicePipes(db, store, await insertTenant(db), receiverUrl);
    const example = await workedExampleOverParse(db, [first, second], EXAMPLE_PAIRS);
    const oneOrganization = await workedExampleOverParse(db, [first], ONE_ORGANIZATION_PAIRS);
    const callbackMs = await callbackLatencyMs(db, tenant, fileId, receiverUrl);
    return [
      {
        name: `runs completed per second, parse of a 1-page PDF (${config.workerConcurrency} worker slots, one process; one organization, so ${config.maxSlotsPerOrganization} runs at once)`,
        value: Math.round(perSecond),
        unit: "runs/s",
      },
      { name: "median time from run creation to completed, one run at a time (parse of a 1-page PDF)", value: Math.round(medianMs * 10) / 10, unit: "ms" },
      {
        name: "runs completed per second of a 1-page PDF invoice, parse alone, two organizations (median of the pairs' rounds)",
        value: Math.round(example.parseRate),
        unit: "runs/s",
      },
      {
        name: "runs completed per second of a 1-page PDF invoice, the worked example pipe, two organizations (median of the pairs' rounds)",
        value: Math.round(example.exampleRate),
        unit: "runs/s",
      },
      {
        name: `documents per second through the worked example pipe (invoices: classify, extract, validate, callback) / parse alone, a 1-page PDF invoice, two organizations (every worker slot busy), median of ${EXAMPLE_PAIRS} pairs of rounds`,
        value: Math.round(example.ratio * 100) / 100,
        unit: "ratio",
      },
      {
        name: `the same with one organization (at most ${config.maxSlotsPerOrganization} of the ${config.workerConcurrency} slots at once), median of ${ONE_ORGANIZATION_PAIRS} pairs of rounds`,
        value: Math.round(oneOrganization.ratio * 100) / 100,
        unit: "ratio",
      },
      {
        name: "median time from a run's end to its callback's arrival at a receiver on loopback, one run at a time",
        value: Math.round(callbackMs * 100) / 100,
        unit: "ms",
      },
      {
        name: `overhead per route step: median time to completed with ${ROUTE_STEPS} route steps after the parse, less without, per step`,
        value: Math.round(((routedMs - medianMs) / ROUTE_STEPS) * 100) / 100,
        unit: "ms",
      },
    ];
  } finally {
    receiver.closeAllConnections();
    receiver.close();
    await workers?.stop();
    await storage.remove();
    await db.destroy();
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
  }
}
