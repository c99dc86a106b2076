import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { join, resolve } from "node:path";
import { sql } from "kysely";
import { startEmbeddedPostgres } from "../src/data/db/embedded.ts";
import { FileStore } from "../src/data/storage/file-store.ts";
import { type BenchDatabase, createBenchDatabase } from "./support/database.ts";
import { fileOf, MULTIPART_CONTENT_TYPE, multipartBody, multipartHead, multipartLength, stampBody } from "./support/multipart.ts";
import { freePort, openFilesOf, sleep } from "./support/processes.ts";
import { type BenchResult, type BenchRow, KIB, MIB } from "./support/report.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchTenant, type Tenant } from "./support/tenants.ts";

// (a) PostgreSQL restarted under load: bounded 503s, recovery, every 2xx fully stored.
// (b) 100 clients abort mid-upload: nothing left behind (temp files, rows, open files).

const OUTAGE_CLIENTS = 8;
const BEFORE_OUTAGE_MS = 2000;
const OUTAGE_MS = 3000;
const AFTER_OUTAGE_MS = 5000;
/** A request still unanswered after this counts as hung. */
const HANG_MS = 15_000;
const ABORTING_CLIENTS = 100;

interface Submission {
  startedAt: number;
  endedAt: number;
  status: number;
  code: string | undefined;
  runId: string | undefined;
  /** SHA-256 of the file sent. */
  sha256: string;
}

let nextFileId = BigInt(Date.now()) << 16n;

/** One submission of a new 1 KiB file; status 0 for no answer (socket error or hang). */
function submit(url: string, keyValue: string): Promise<Submission> {
  const body = multipartBody(KIB);
  stampBody(body, nextFileId++);
  const sha256 = createHash("sha256").update(fileOf(body)).digest("hex");
  const startedAt = performance.now();
  return new Promise((resolve) => {
    const done = (status: number, text = "") => {
      let parsed: { code?: string; runId?: string } = {};
      try {
        parsed = JSON.parse(text) as typeof parsed;
      } catch {
        /* not JSON: counted by status */
      }
      resolve({ startedAt, endedAt: performance.now(), status, code: parsed.code, runId: parsed.runId, sha256 });
    };
    const req = request(
      url,
      {
        method: "POST",
        headers: { "x-api-key": keyValue, "content-type": MULTIPART_CONTENT_TYPE, "content-length": body.length },
        timeout: HANG_MS,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => done(res.statusCode ?? 0, text));
        res.on("error", () => done(0));
      },
    );
    req.on("timeout", () => req.destroy(new Error("hung")));
    req.on("error", () => done(0));
    req.end(body);
  });
}

/** Runs, file rows and stored bytes of every accepted submission, checked by SHA-256. */
async function unverified(bench: BenchDatabase, store: FileStore, organizationId: string, accepted: Submission[]): Promise<number> {
  let missing = 0;
  for (const submission of accepted) {
    const row = await bench.db
      .selectFrom("runs")
      .innerJoin("files", "files.id", "runs.file_id")
      .select("files.sha256")
      .where("runs.id", "=", submission.runId!)
      .executeTakeFirst();
    const stored = await readFile(store.pathOf(organizationId, submission.sha256)).catch(() => undefined);
    const storedSha = stored === undefined ? undefined : createHash("sha256").update(stored).digest("hex");
    if (row?.sha256 !== submission.sha256 || storedSha !== submission.sha256) missing++;
  }
  return missing;
}

/** (a) Clients submit while the edge's (embedded) PostgreSQL is stopped and started again. */
async function postgresRestart(): Promise<BenchRow[]> {
  const dir = resolve(".data/bench-postgres");
  const port = await freePort();
  const startPostgres = () => startEmbeddedPostgres({ dir, port, database: "postgres", log: () => {}, warn: (message) => console.warn(message) });
  let postgres = await startPostgres();
  const bench = await createBenchDatabase(postgres.url);
  const storage = await tempStorage();
  const store = new FileStore(storage.dir);
  try {
    const tenant = await benchTenant(bench.clients, 1);
    const server = await spawnEdge(bench.url, storage.dir);
    const url = triggerUrl(server.url, tenant);
    const submissions: Submission[] = [];
    let stopping = false;
    const clients = Array.from({ length: OUTAGE_CLIENTS }, async () => {
      while (!stopping) {
        const submission = await submit(url, tenant.keyValue);
        submissions.push(submission);
        // A refused request is retried after a pause, as a polite client would, not in a tight loop.
        if (submission.status !== 202) await sleep(50);
      }
    });
    await sleep(BEFORE_OUTAGE_MS);
    const downAt = performance.now();
    await postgres.stop();
    await sleep(OUTAGE_MS);
    postgres = await startPostgres();
    const backAt = performance.now();
    await sleep(AFTER_OUTAGE_MS);
    stopping = true;
    await Promise.all(clients);
    const crashed = server.exited();
    if (crashed) process.stderr.write(`bench: the edge crashed during the PostgreSQL restart:\n${server.stderr()}\n`);
    await server.stop();

    const accepted = submissions.filter((submission) => submission.status === 202);
    const unavailable = submissions.filter((submission) => submission.status === 503 && submission.code === "service_unavailable");
    const failedAfterBack = submissions.filter((submission) => submission.status !== 202 && submission.startedAt >= backAt);
    const firstAcceptedAfterBack = accepted.find((submission) => submission.startedAt >= backAt);
    const recoveredAt = Math.max(firstAcceptedAfterBack?.endedAt ?? Infinity, ...failedAfterBack.map((submission) => submission.endedAt));
    const phase = (from: number, to: number) => accepted.filter((submission) => submission.endedAt >= from && submission.endedAt < to).length;
    return [
      {
        name: "PostgreSQL restart: 2xx before / during / after the outage",
        value: accepted.length,
        unit: `${phase(0, downAt)} / ${phase(downAt, backAt)} / ${phase(backAt, Infinity)}`,
      },
      { name: "PostgreSQL restart: 503 service_unavailable answers", value: unavailable.length, unit: "requests" },
      {
        name: "PostgreSQL restart: other answers (not 202, not 503 problem; 0 = no answer or hung)",
        value: submissions.length - accepted.length - unavailable.length,
        unit: "requests",
        target: { op: "<=", value: 0 },
      },
      {
        name: "PostgreSQL restart: slowest answer",
        value: Math.round(Math.max(...submissions.map((submission) => submission.endedAt - submission.startedAt))),
        unit: "ms",
        target: { op: "<=", value: 6000 },
      },
      {
        name: "PostgreSQL restart: recovery after the database is back",
        value: Math.round(recoveredAt - backAt),
        unit: "ms",
        target: { op: "<=", value: 5000 },
      },
      { name: "PostgreSQL restart: edge process crashed", value: crashed ? 1 : 0, unit: "yes=1", target: { op: "<=", value: 0 } },
      {
        name: "PostgreSQL restart: 2xx without run, file row or matching stored bytes",
        value: await unverified(bench, store, tenant.organizationId, accepted),
        unit: "requests",
        target: { op: "<=", value: 0 },
      },
    ];
  } finally {
    await bench.drop();
    await postgres.stop();
    await storage.remove();
  }
}

/** Opens an upload of a 5 MiB file and sends its first MiB; the rest never comes. */
async function startAbandonedUpload(port: number, path: string, keyValue: string): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  socket.on("error", () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${keyValue}\r\n`
      + `Content-Type: ${MULTIPART_CONTENT_TYPE}\r\nContent-Length: ${multipartLength(5 * MIB)}\r\n\r\n`,
  );
  socket.write(multipartHead());
  socket.write(Buffer.alloc(MIB, "%PDF-1.7\n"));
  return socket;
}

async function filesIn(dir: string): Promise<number> {
  return (await readdir(dir)).length;
}

/** (b) 100 clients start uploads and vanish mid-body, half with FIN, half with a TCP reset. */
async function abortedUploads(): Promise<BenchRow[]> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  const tmp = join(storage.dir, "tmp");
  try {
    const tenant: Tenant = await benchTenant(bench.clients, 10);
    const server = await spawnEdge(bench.url, storage.dir);
    const port = Number(new URL(server.url).port);
    const path = new URL(triggerUrl(server.url, tenant)).pathname;
    // The database pool and code paths warmed up with one finished upload from another tenant.
    const warm = await benchTenant(bench.clients, 10);
    await submit(triggerUrl(server.url, warm), warm.keyValue);
    const before = await openFilesOf(server.pid, storage.dir);

    const sockets = await Promise.all(Array.from({ length: ABORTING_CLIENTS }, () => startAbandonedUpload(port, path, tenant.keyValue)));
    // Until the edge has authenticated them all and is staging their files.
    let staging = 0;
    for (let waited = 0; waited < 5000 && staging < ABORTING_CLIENTS; waited += 100) {
      await sleep(100);
      staging = await filesIn(tmp);
    }
    sockets.forEach((socket, index) => (index % 2 === 0 ? socket.destroy() : socket.resetAndDestroy()));

    let left = { tmp: 0, open: before };
    for (let waited = 0; waited < 5000; waited += 100) {
      await sleep(100);
      left = { tmp: await filesIn(tmp), open: await openFilesOf(server.pid, storage.dir) };
      if (left.tmp === 0 && left.open.under === 0) break;
    }
    const rowsLeft = async (table: "files" | "runs") =>
      (
        await bench.db
          .selectFrom(table)
          .select(sql<number>`count(*)::int`.as("n"))
          .where("organization_id", "=", tenant.organizationId)
          .executeTakeFirstOrThrow()
      ).n;
    const count = (await rowsLeft("files")) + (await rowsLeft("runs"));
    const crashed = server.exited();
    await server.stop();
    return [
      { name: `${ABORTING_CLIENTS} aborted uploads: being staged when the clients vanished`, value: staging, unit: "temp files" },
      { name: `${ABORTING_CLIENTS} aborted uploads: temp files left in STORAGE_DIR/tmp`, value: left.tmp, unit: "files", target: { op: "<=", value: 0 } },
      { name: `${ABORTING_CLIENTS} aborted uploads: file and run rows left`, value: count, unit: "rows", target: { op: "<=", value: 0 } },
      { name: `${ABORTING_CLIENTS} aborted uploads: open handles on STORAGE_DIR left`, value: left.open.under, unit: "fds", target: { op: "<=", value: 0 } },
      {
        name: `${ABORTING_CLIENTS} aborted uploads: server fds before / after`,
        value: left.open.total - before.total,
        unit: `${before.total} / ${left.open.total} (change)`,
      },
      { name: `${ABORTING_CLIENTS} aborted uploads: edge process crashed`, value: crashed ? 1 : 0, unit: "yes=1", target: { op: "<=", value: 0 } },
    ];
  } finally {
    await bench.drop();
    await storage.remove();
  }
}

export async function benchFaults(): Promise<BenchResult> {
  return { rows: [...(await postgresRestart()), ...(await abortedUploads())], sections: [] };
}

if (import.meta.main) {
  const { resultsTable } = await import("./support/report.ts");
  console.log(resultsTable((await benchFaults()).rows));
}
