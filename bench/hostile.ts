import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Kysely } from "kysely";
import { loadConfig } from "../src/platform/config.ts";
import type { Database } from "../src/data/db/schema.ts";
import { FileStore } from "../src/data/storage/file-store.ts";
import { encryptedPdf, inflatingPdf, pathologicalXlsx, zeroJpeg } from "../test/parse/hostile-samples.ts";
import { createBenchDatabase } from "./support/database.ts";
import type { LoadSpec } from "./support/load-client.ts";
import { memoryOf, runLoad, type ServerProcess, sleep } from "./support/processes.ts";
import { type BenchResult, KIB, MIB } from "./support/report.ts";
import { addFile, createPipe, queueRuns } from "../test/worker/fixtures.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchPipe, benchTenant } from "./support/tenants.ts";

// One process serving the edge and running the workers (the default deployment), its task pool
// parsing hostile documents back to back: edge throughput against the same process with nothing to
// parse, the slowest /healthz, and how far the process's memory rises.

const CONNECTIONS = 16;
const WARMUP_MS = 1000;
const ROUND_MS = 3000;
const ROUNDS = 3;
const HEALTH_PROBE_MS = 50;
const RSS_SAMPLE_MS = 20;
/** Hostile runs kept queued or running during a hostile round, so the pool never idles. */
const HOSTILE_IN_FLIGHT = 2;

const HOSTILE_DOCUMENTS: [name: string, format: string, bytes: () => Buffer][] = [
  ["inflates-to-1-GiB.pdf", "pdf", () => inflatingPdf(1024 * MIB)],
  ["zeros.jpg", "jpeg", () => zeroJpeg(30 * MIB)],
  ["pathological.xlsx", "xlsx", pathologicalXlsx],
  ["lone-surrogate.html", "html", () => Buffer.from("<p>hello &#xD800; world</p>")],
  ["encrypted.pdf", "pdf", encryptedPdf],
];

/** Which document the next hostile run parses; the cycle goes on across rounds, so every class gets its turn. */
let nextDocument = 0;

/** Keeps HOSTILE_IN_FLIGHT hostile runs unfinished, cycling through the documents, until stopped. */
function feedHostileRuns(db: Kysely<Database>, queue: (index: number) => Promise<string>) {
  const unfinished = new Set<string>();
  let stopped = false;
  const forgetEnded = async () => {
    if (unfinished.size === 0) return;
    const ended = await db
      .selectFrom("runs")
      .select("id")
      .where("id", "in", [...unfinished])
      .where("status", "in", ["completed", "failed", "cancelled"])
      .execute();
    for (const { id } of ended) unfinished.delete(id);
  };
  const loop = (async () => {
    while (!stopped) {
      await forgetEnded();
      while (unfinished.size < HOSTILE_IN_FLIGHT) unfinished.add(await queue(nextDocument++ % HOSTILE_DOCUMENTS.length));
      await sleep(50);
    }
  })();
  return {
    /** Stops queueing and resolves once every hostile run has ended. */
    async drain(): Promise<void> {
      stopped = true;
      await loop;
      while (unfinished.size > 0) {
        await forgetEnded();
        await sleep(50);
      }
    },
  };
}

/** Samples /healthz latency and the server's RSS until stopped; their maxima. */
function probe(server: ServerProcess) {
  let slowestHealthMs = 0;
  let peakRss = 0;
  let stopped = false;
  const health = (async () => {
    while (!stopped) {
      const started = performance.now();
      await fetch(`${server.url}/healthz`).then((response) => response.arrayBuffer());
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      await sleep(HEALTH_PROBE_MS);
    }
  })();
  const memory = setInterval(
    () =>
      void memoryOf(server.pid).then(
        ({ rss }) => (peakRss = Math.max(peakRss, rss)),
        () => {},
      ),
    RSS_SAMPLE_MS,
  );
  return {
    async stop() {
      stopped = true;
      clearInterval(memory);
      await health;
      return { slowestHealthMs, peakRss };
    },
  };
}

/** The upload of the stall probe: a JPEG of zeros, received whole before it is refused or parsed. */
const UPLOAD_MIB = 30;

/**
 * The slowest /healthz while a large upload goes to `acceptingPipe` (which takes it) and then to
 * `refusingPipe` (which refuses its format). curl sends the upload from a process of its own, so
 * building and sending the 30 MiB body never delays this process's probe.
 */
async function slowestHealthDuringUpload(server: ServerProcess, keyValue: string, acceptingPipe: string, refusingPipe: string): Promise<number> {
  const folder = await mkdtemp(join(tmpdir(), "docpipe-bench-upload-"));
  const path = join(folder, "zeros.jpg");
  await writeFile(path, zeroJpeg(UPLOAD_MIB * MIB));
  const watch = probe(server);
  try {
    for (const [pipeId, expected] of [
      [acceptingPipe, 202],
      [refusingPipe, 400],
    ] as const) {
      const { stdout } = await promisify(execFile)("curl", [
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "-H",
        `x-api-key: ${keyValue}`,
        "-F",
        `file=@${path};type=image/jpeg`,
        `${server.url}/pipes/${pipeId}/trigger`,
      ]);
      if (Number(stdout) !== expected) throw new Error(`the ${UPLOAD_MIB} MiB upload got ${stdout}, not ${expected}`);
      await sleep(500); // the accepted one is parsed meanwhile
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
  return (await watch.stop()).slowestHealthMs;
}

export async function benchHostile(): Promise<BenchResult> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  const config = loadConfig({});
  let server: ServerProcess | undefined;
  try {
    const tenant = await benchTenant(bench.clients, 20);
    const owner = { organizationId: tenant.organizationId, workspaceId: tenant.defaultWorkspaceId };
    const store = new FileStore(storage.dir);
    await store.init();
    const parsePipe = await createPipe(bench.db, owner, [{ id: "parse", parse: {} }]);
    const fileIds: string[] = [];
    for (const [name, format, bytes] of HOSTILE_DOCUMENTS) fileIds.push(await addFile(bench.db, store, owner, name, format, bytes()));
    const queue = async (index: number) => (await queueRuns(bench.db, owner, parsePipe, fileIds[index]!, 1))[0]!;

    server = await spawnEdge(bench.url, storage.dir, [], { DOCPIPE_ROLES: "edge,services,worker" });
    const spec = (durationMs: number): LoadSpec => ({
      url: triggerUrl(server!.url, tenant),
      headers: { "x-api-key": tenant.keyValue },
      fileSize: KIB,
      durationMs,
      connections: CONNECTIONS,
    });
    const round = async () => {
      const watch = probe(server!);
      const load = await runLoad(spec(ROUND_MS));
      if (load.ok !== load.requests) throw new Error(`load got non-2xx answers: ${JSON.stringify(load.statuses)}; stderr: ${server!.stderr()}`);
      return { rate: load.ok / (load.elapsedMs / 1000), ...(await watch.stop()) };
    };

    await runLoad(spec(WARMUP_MS));
    const quiet = { rate: 0, slowestHealthMs: 0, peakRss: 0 };
    const hostile = { rate: 0, slowestHealthMs: 0, peakRss: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      const before = await round();
      quiet.rate = Math.max(quiet.rate, before.rate);
      quiet.slowestHealthMs = Math.max(quiet.slowestHealthMs, before.slowestHealthMs);
      quiet.peakRss = Math.max(quiet.peakRss, before.peakRss);
      const feed = feedHostileRuns(bench.db, queue);
      await sleep(500); // a hostile parse is under way
      const during = await round();
      await feed.drain();
      hostile.rate = Math.max(hostile.rate, during.rate);
      hostile.slowestHealthMs = Math.max(hostile.slowestHealthMs, during.slowestHealthMs);
      hostile.peakRss = Math.max(hostile.peakRss, during.peakRss);
    }
    const upload = await slowestHealthDuringUpload(server, tenant.keyValue, await benchPipe(bench.clients, tenant.organizationId, ["jpeg"], 50), tenant.pipeId);
    const outcomes = await bench.db
      .selectFrom("run_steps")
      .innerJoin("runs", "runs.id", "run_steps.run_id")
      .select(["run_steps.status", "run_steps.error"])
      .where("runs.pipe_id", "=", parsePipe)
      .where("run_steps.node_type", "=", "parse")
      .execute();
    const byOutcome = new Map<string, number>();
    for (const { status, error } of outcomes) {
      const outcome = status === "completed" ? "completed" : (/^[a-z_]+(?=:)/.exec(error)?.[0] ?? status);
      byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    }
    const label = `edge 1 KiB, one process with workers (pool of ${config.taskPoolSize}, ${config.parseMemoryMb} MB budget)`;
    return {
      rows: [
        { name: `${label}: throughput, nothing to parse`, value: Math.round(quiet.rate), unit: "req/s" },
        { name: `${label}: throughput while the pool parses hostile documents`, value: Math.round(hostile.rate), unit: "req/s" },
        {
          name: `${label}: throughput with hostile parsing / without`,
          value: Math.round((hostile.rate / quiet.rate) * 1000) / 1000,
          unit: "ratio",
          target: { op: ">=", value: 0.8 },
        },
        { name: `${label}: slowest /healthz, nothing to parse`, value: Math.round(quiet.slowestHealthMs), unit: "ms" },
        {
          name: `${label}: slowest /healthz while parsing hostile documents`,
          value: Math.round(hostile.slowestHealthMs),
          unit: "ms",
          target: { op: "<=", value: 250 },
        },
        {
          name: `${label}: slowest /healthz while a ${UPLOAD_MIB} MiB JPEG of zeros is uploaded, accepted (then parsed in the pool) and refused by a PDF-only pipe`,
          value: Math.round(upload),
          unit: "ms",
          target: { op: "<=", value: 250 },
        },
        { name: `${label}: peak RSS, nothing to parse`, value: Math.round(quiet.peakRss / MIB), unit: "MiB" },
        {
          name: `${label}: peak RSS while parsing hostile documents, above the peak without`,
          value: Math.round((hostile.peakRss - quiet.peakRss) / MIB),
          unit: "MiB",
          target: { op: "<=", value: config.parseMemoryMb + 100 },
        },
        {
          name: `${label}: hostile parses by outcome`,
          value: outcomes.length,
          unit: [...byOutcome].map(([outcome, count]) => `${outcome} ${count}`).join(", "),
        },
      ],
      sections: [],
    };
  } finally {
    await server?.stop();
    await bench.drop();
    await storage.remove();
  }
}
