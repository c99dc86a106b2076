import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cancelUnfinishedRun } from "../../src/data/repositories/runs.ts";
import { encryptedPdf, inflatingPdf, pathologicalXlsx, zeroJpeg } from "../parse/hostile-samples.ts";
import { docx, onePagePdf, xlsx } from "../parse/samples.ts";
import { startEdge } from "../support/edge.ts";
import { type ProcessWatch, watchProcess } from "../support/process-watch.ts";
import { addFile, createPipe, insertTenant, queueRuns, stepsOf, type Tenant, waitForRuns } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";
import { sleep, until } from "../support/wait.ts";

// Each document goes through real workers: claimed, read, parsed in the task pool, recorded. While
// it is parsed, this process, which also serves a real edge, must not stall or grow: /healthz is
// polled throughout, and the event loop's delay and the resident memory are watched.

const MiB = 1024 * 1024;
/**
 * The longest the event loop may stall. Parsed on the loop, these documents blocked it for seconds;
 * the 250 ms target itself is measured by `npm run bench` (bench/hostile.ts), not by a timed test
 * on a machine shared with other work.
 */
const MAX_STALL_MS = 1000;

const bed = workerBed({ env: { TASK_POOL_SIZE: "1" }, ownPool: true });
const { start, running } = bed;
let watch: ProcessWatch | undefined;
let edgeUrl: string;
/** The slowest /healthz answer of the last parseEach (ms). */
let slowestHealthMs = 0;

beforeAll(async () => {
  const edge = await startEdge();
  edgeUrl = edge.url;
  await fetch(`${edgeUrl}/healthz`); // its first answer pays for compiling the route, not for any parse
  return () => edge.close();
});

afterEach(() => {
  watch?.stop();
  watch = undefined;
});

/** Runs a parse pipeline over each document in turn (one worker slot) while watching this process; the runs and their parse steps. */
async function parseEach(documents: [name: string, format: string, bytes: Buffer][], env: Record<string, string> = {}) {
  const tenant = await insertTenant(bed.db);
  const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
  const runIds: string[] = [];
  for (const [name, format, bytes] of documents)
    runIds.push(...(await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, name, format, bytes))));
  watch = watchProcess();
  slowestHealthMs = 0;
  let parsing = true;
  const health = (async () => {
    while (parsing) {
      const started = performance.now();
      expect((await fetch(`${edgeUrl}/healthz`)).status).toBe(200);
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      await sleep(25);
    }
  })();
  start({ WORKER_CONCURRENCY: "1", ...env });
  const runs = await waitForRuns(bed.db, runIds, undefined, 50_000).finally(() => (parsing = false));
  await health;
  watch.stop();
  const byId = new Map(runs.map((run) => [run.id, run]));
  return Promise.all(runIds.map(async (id) => ({ run: byId.get(id)!, parse: (await stepsOf(bed.db, id))[1]! })));
}

// Each case parses in real pool processes that start cold: seconds each on a busy 2-core machine.
describe("hostile documents", { timeout: 60_000 }, () => {
  it("a PDF whose stream inflates to 1 GiB fails with parse_memory_exceeded; this process neither stalls nor grows; the next parse works", async () => {
    const [bomb, next] = await parseEach(
      [
        ["bomb.pdf", "pdf", inflatingPdf(1024 * MiB)],
        ["next.pdf", "pdf", onePagePdf("Still parsing")],
      ],
      { PARSE_MEMORY_MB: "256" },
    );
    const error = "parse_memory_exceeded: the parse needed more than its budget of 256 MB";
    expect(bomb!.parse).toMatchObject({ status: "failed", error, output: null });
    expect(bomb!.run).toMatchObject({ status: "failed", error: `step parse (parse) failed: ${error}`, attempts: 1 });
    expect(next!.run.status).toBe("completed");
    expect(next!.parse.output).toMatchObject({ text: "Still parsing" });
    expect(watch!.rssGrowthMb()).toBeLessThan(100);
    expect(watch!.maxDelayMs()).toBeLessThan(MAX_STALL_MS);
    expect(slowestHealthMs).toBeLessThan(MAX_STALL_MS);
  });

  it("a parse past its time budget fails with parse_timeout, and the next parse works", async () => {
    const [slow, next] = await parseEach(
      [
        ["slow.xlsx", "xlsx", pathologicalXlsx()],
        ["next.txt", "txt", Buffer.from("on time")],
      ],
      // The workbook took 3.8 s from a cold pool on an idle 2-core machine (process start included);
      // 1000 ms is about three times the 300 ms a small text exceeded on a loaded CI run.
      { PARSE_TIMEOUT_MS: "1000" },
    );
    const error = "parse_timeout: the parse took longer than its budget of 1000 ms";
    expect(slow!.parse).toMatchObject({ status: "failed", error });
    expect(slow!.run).toMatchObject({ status: "failed", error: `step parse (parse) failed: ${error}` });
    expect(next!.parse).toMatchObject({ status: "completed", output: { text: "on time" } });
  });

  it("a 30 MiB JPEG of zeros and a pathological XLSX end within their budget without stalling this process", async () => {
    const [jpeg, workbook] = await parseEach([
      ["zeros.jpg", "jpeg", zeroJpeg(30 * MiB)],
      ["many.xlsx", "xlsx", pathologicalXlsx()],
    ]);
    expect(jpeg!.parse).toMatchObject({ status: "failed", error: expect.stringMatching(/^document_corrupt: cannot parse the jpeg document: /) });
    expect(jpeg!.run.status).toBe("failed");
    expect(workbook!.parse).toMatchObject({ status: "completed" });
    expect(workbook!.run.status).toBe("completed");
    expect(workbook!.parse.output).toMatchObject({ format: "xlsx", truncated: true });
    expect(watch!.maxDelayMs()).toBeLessThan(MAX_STALL_MS);
    expect(slowestHealthMs).toBeLessThan(MAX_STALL_MS);
  });

  it("an encrypted PDF fails with document_encrypted, a corrupt one with document_corrupt", async () => {
    const [encrypted, corrupt] = await parseEach([
      ["locked.pdf", "pdf", encryptedPdf()],
      ["broken.pdf", "pdf", Buffer.from("%PDF-1.7\n1 0 obj <<")],
    ]);
    expect(encrypted!.parse).toMatchObject({
      status: "failed",
      error: "document_encrypted: the PDF is encrypted with a password; send it without the password protection",
    });
    expect(encrypted!.run).toMatchObject({
      status: "failed",
      error: "step parse (parse) failed: document_encrypted: the PDF is encrypted with a password; send it without the password protection",
    });
    expect(corrupt!.parse).toMatchObject({ status: "failed", error: expect.stringMatching(/^document_corrupt: cannot parse the pdf document: /) });
  });

  it("text with lone surrogates or NUL (HTML, plain text, OOXML) is stored with U+FFFD and without NUL, and the run completes", async () => {
    const results = await parseEach([
      ["lone.html", "html", Buffer.from("<p>hello &#xD800; world</p>")],
      ["nul.txt", "txt", Buffer.from("a\u0000b")],
      ["escapes.xlsx", "xlsx", xlsx({ sheets: [{ name: "S\u0000heet" }], sharedStrings: ["<t>x_xD800_y_x0000_z</t>"] })],
      ["lone.docx", "docx", docx(["low &#xDC00; high &#xD83D;"])],
    ]);
    expect(results.map(({ run }) => run.status)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(results.map(({ parse }) => (parse.output as { text: string }).text)).toEqual(["hello \uFFFD world", "ab", "x\uFFFDyz", "low \uFFFD high \uFFFD"]);
    expect(results[2]!.parse.output).toMatchObject({ sheetNames: ["Sheet"] });
  });
});

describe("stopping a parse in progress", { timeout: 60_000 }, () => {
  it("CancelRun reaches the parse at once through its notification, long before a lease renewal would", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [slow] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    const log = start({ RUN_LEASE_SECONDS: "60" }); // renewals every 20 s
    await until(async () => (await stepsOf(bed.db, slow!))[1]?.status === "running");
    await sleep(300);
    const stopped = performance.now();
    expect(await cancelUnfinishedRun(bed.db, tenant.organizationId, slow!, new Date())).toBe(true);
    await until(async () => log.lines.some((line) => line.message === "run stopped: cancelled or taken over"));
    expect(performance.now() - stopped).toBeLessThan(1000);
  });

  it.each([
    ["CancelRun", (runId: string, tenant: Tenant) => cancelUnfinishedRun(bed.db, tenant.organizationId, runId, new Date()), "cancelled"],
    ["a lost lease", (runId: string) => bed.db.updateTable("runs").set({ lease_owner: "another worker" }).where("id", "=", runId).execute(), "running"],
  ] as const)("%s ends the parse at once and frees the pool", async (_, stop, status) => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [slow] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    const log = start({ WORKER_CONCURRENCY: "2", MAX_SLOTS_PER_ORGANIZATION: "2" });
    await until(async () => (await stepsOf(bed.db, slow!))[1]?.status === "running");
    await sleep(300); // the pool process has the task
    const stopped = performance.now();
    await stop(slow!, tenant);
    await until(async () => log.lines.some((line) => line.message === "run stopped: cancelled or taken over"));
    // The parse needs seconds more; the cancellation's notification, or the lease renewal (every 1/3 s here), ended it.
    expect(performance.now() - stopped).toBeLessThan(1500);
    const [run] = await waitForRuns(bed.db, [slow!], [status]);
    expect(run!.status).toBe(status);
    // With the pool's only process freed, another run parses at once.
    const [next] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "next.txt", "txt", Buffer.from("free")));
    expect((await waitForRuns(bed.db, [next!], ["completed"]))[0]!.status).toBe("completed");
  });

  it("stopping the workers ends a parse at once and gives its run back to the queue", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    start();
    await until(async () => (await stepsOf(bed.db, runId!))[1]?.status === "running");
    await sleep(300);
    const stopping = performance.now();
    await running.pop()!.stop();
    expect(performance.now() - stopping).toBeLessThan(1500);
    expect((await waitForRuns(bed.db, [runId!], ["queued"]))[0]).toMatchObject({ status: "queued", attempts: 0 });
  });

  it("a cancelled run's parse step is closed, not left running", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    start();
    await until(async () => (await stepsOf(bed.db, runId!))[1]?.status === "running");
    expect(await cancelUnfinishedRun(bed.db, tenant.organizationId, runId!, new Date())).toBe(true);
    expect((await stepsOf(bed.db, runId!))[1]).toMatchObject({
      status: "failed",
      error: "the run was cancelled before this step finished",
      end_time: expect.any(Date),
    });
  });
});
