import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TaskBudgetError, TaskPool } from "../../src/pool/task-pool.ts";
import { inflatingPdf, zeroJpeg } from "../parse/hostile-samples.ts";
import { onePagePdf } from "../parse/samples.ts";
import { watchProcess } from "../support/process-watch.ts";

const MiB = 1024 * 1024;
const MEMORY_MB = 256;
/** Parsed on the loop, these documents blocked it for seconds; the 250 ms target is measured by `npm run bench`. */
const MAX_STALL_MS = 1000;
const pool = new TaskPool({ size: 1, timeoutMs: 20_000, memoryMb: MEMORY_MB });
const quickPool = new TaskPool({ size: 1, timeoutMs: 300, memoryMb: 512 });
afterAll(() => Promise.all([pool.destroy(), quickPool.destroy()]));

const never = new AbortController().signal;

const files = await mkdtemp(join(tmpdir(), "docpipe-pool-"));
afterAll(() => rm(files, { recursive: true, force: true }));

/** A parse task over `bytes`, stored as a file the pool process reads. */
async function task(format: string, bytes: Buffer) {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const path = join(files, sha256);
  await writeFile(path, bytes);
  return { format, file: { path, sha256 } };
}

/** Runs `work` while watching this process: the longest event-loop stall and the resident-memory growth. */
async function observed<T>(work: () => Promise<T>): Promise<{ outcome: T | Error; maxDelayMs: number; rssGrowthMb: number }> {
  const watch = watchProcess();
  try {
    const outcome = await work().catch((error: Error) => error);
    return { outcome, maxDelayMs: watch.maxDelayMs(), rssGrowthMb: watch.rssGrowthMb() };
  } finally {
    watch.stop();
  }
}

describe("the task pool", () => {
  it("parses in a process of its own and returns the output", async () => {
    await expect(pool.run("parse", await task("pdf", onePagePdf("Pooled")), never)).resolves.toMatchObject({ format: "pdf", text: "Pooled" });
  });

  it("ends a task past its memory budget (a PDF stream inflating to 1 GiB) without growing this process, and the next task works", async () => {
    const bomb = inflatingPdf(1024 * MiB);
    const input = await task("pdf", bomb);
    const { outcome, maxDelayMs, rssGrowthMb } = await observed(() => pool.run("parse", input, never));
    expect(outcome).toBeInstanceOf(TaskBudgetError);
    expect(outcome).toMatchObject({ budget: "memory", message: `it needed more than ${MEMORY_MB} MB` });
    expect(rssGrowthMb).toBeLessThan(100);
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    await expect(pool.run("parse", await task("pdf", onePagePdf("After")), never)).resolves.toMatchObject({ text: "After" });
  });

  it("ends a task past its time budget, and the next task works", async () => {
    const input = await task("jpeg", zeroJpeg(30 * MiB));
    const { outcome, maxDelayMs } = await observed(() => quickPool.run("parse", input, never));
    expect(outcome).toBeInstanceOf(TaskBudgetError);
    expect(outcome).toMatchObject({ budget: "time", message: "it took longer than 300 ms" });
    expect(maxDelayMs).toBeLessThan(MAX_STALL_MS);
    await expect(quickPool.run("parse", await task("txt", Buffer.from("next")), never)).resolves.toMatchObject({ text: "next" });
  });

  it("ends a task when its signal aborts, rejecting with the signal's reason at once", async () => {
    const abort = new AbortController();
    const running = pool.run("parse", await task("jpeg", zeroJpeg(30 * MiB)), abort.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reason = new Error("cancelled");
    const aborted = performance.now();
    abort.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(performance.now() - aborted).toBeLessThan(100);
    await expect(pool.run("parse", await task("txt", Buffer.from("again")), never)).resolves.toMatchObject({ text: "again" });
  });

  it("a process that dies under its task (V8's heap limit, the kernel's OOM killer) fails the task as over its memory budget, and the pool goes on", async () => {
    const others = new Set(await poolProcesses());
    const ownPool = new TaskPool({ size: 1, timeoutMs: 20_000, memoryMb: MEMORY_MB });
    try {
      const outcome = ownPool.run("parse", await task("jpeg", zeroJpeg(30 * MiB)), never).catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const running = (await poolProcesses()).filter((pid) => !others.has(pid));
      expect(running).toHaveLength(1);
      process.kill(running[0]!, "SIGKILL");
      expect(await outcome).toMatchObject({ name: "TaskBudgetError", budget: "memory" });
      await expect(ownPool.run("parse", await task("txt", Buffer.from("on")), never)).resolves.toMatchObject({ text: "on" });
    } finally {
      await ownPool.destroy();
    }
  });

  it("rejects a task whose signal has already aborted without running it", async () => {
    const reason = new Error("stopped");
    await expect(pool.run("parse", await task("txt", Buffer.from("x")), AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it("passes a task's error back with its name, message and code", async () => {
    await expect(pool.run("parse", await task("pdf", Buffer.from("%PDF-1.4 garbage")), never)).rejects.toMatchObject({
      name: "ParseError",
      code: "document_corrupt",
      message: "cannot parse the pdf document: Invalid PDF structure.",
    });
  });

  it("runs its processes below normal CPU priority, so the process serving HTTP goes first", async () => {
    await pool.run("parse", await task("txt", Buffer.from("x")), never);
    const children = await poolProcesses();
    expect(children.length).toBeGreaterThan(0);
    for (const pid of children) {
      const stat = await readFile(`/proc/${pid}/stat`, "latin1");
      const nice = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      expect(nice).toBe(10);
    }
  });

  it("gives its processes no environment: no secret is within reach of a document", async () => {
    process.env.DOCPIPE_TEST_SECRET = "s3cret";
    try {
      await pool.run("parse", await task("txt", Buffer.from("x")), never);
      const children = await poolProcesses();
      expect(children.length).toBeGreaterThan(0);
      for (const pid of children) {
        const environment = (await readFile(`/proc/${pid}/environ`, "latin1")).split("\0").filter((entry) => entry !== "");
        // Only what tinypool and Node's IPC channel set.
        expect(environment.map((entry) => entry.split("=")[0]).sort()).toEqual(["NODE_CHANNEL_FD", "NODE_CHANNEL_SERIALIZATION_MODE", "TINYPOOL_WORKER_ID"]);
      }
    } finally {
      delete process.env.DOCPIPE_TEST_SECRET;
    }
  });
});

/** The ids of this process's children that run tinypool's process entry. */
async function poolProcesses(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "latin1").catch(() => "");
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const command = await readFile(`/proc/${entry}/cmdline`, "latin1").catch(() => "");
    if (parent === process.pid && command.includes("tinypool")) pids.push(Number(entry));
  }
  return pids;
}
