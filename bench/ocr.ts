import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { createCanvas } from "@napi-rs/canvas";
import { closeOcr } from "../src/documents/parse/ocr.ts";
import { trainedDataFile } from "../src/documents/parse/ocr-languages.ts";
import { parseDocument } from "../src/documents/parse/parse-document.ts";
import { characterErrorRate } from "../test/parse/ocr-samples.ts";
import type { Row } from "./authenticate-key.ts";
import { type BenchDatabase, createBenchDatabase } from "./support/database.ts";
import { runLoad } from "./support/processes.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchPipe, benchTenant } from "./support/tenants.ts";

// OCR throughput on what a scanner makes of a printed letter: an A4 page at 300 dpi (2480 x 3508),
// 12 pt text over most of it. Ours is the parse code path (sharp prepares the picture, tesseract.js
// reads it, one engine reused); the anchor is Debian's native tesseract on the same PNG, all pages
// in one invocation so its model loads once, as ours does, on one thread as ours. It runs twice: with
// our model (the same trained data, so the ratio is WebAssembly against native code) and with
// Debian's own English model (tessdata "fast": a smaller network, what a native install reads with).

const PAGES = Number(process.env.BENCH_OCR_PAGES ?? 4);
const NATIVE = "/usr/bin/tesseract";
const run = promisify(execFile);

const WORDS =
  "the quick brown fox jumps over lazy dog invoice total amount due payment terms within thirty days of receipt please quote reference number".split(" ");

/** Lines of plausible prose, deterministic, each about 75 characters (a 12 pt line across A4 with margins). */
function pageLines(count: number): string[] {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: count }, () => {
    let line = "";
    while (line.length < 70) line += `${WORDS[next() % WORDS.length]} `;
    return line.trim();
  });
}

function a4Page(lines: string[]): Buffer {
  const canvas = createCanvas(2480, 3508);
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = "#000000";
  context.font = '50px "DejaVu Sans", sans-serif'; // 12 pt at 300 dpi
  lines.forEach((line, index) => context.fillText(line, 236, 300 + index * 75));
  return canvas.toBuffer("image/png");
}

/** Native tesseract on `pages` copies of the page; with our trained data when `ourModel`, else Debian's. */
async function native(png: Buffer, pages: number, ourModel: boolean): Promise<{ seconds: number; text: string }> {
  const folder = await mkdtemp(join(tmpdir(), "docpipe-bench-ocr-"));
  try {
    const model = ourModel ? ["--tessdata-dir", folder] : [];
    if (ourModel) await writeFile(join(folder, "eng.traineddata"), gunzipSync(await readFile(trainedDataFile("eng"))));
    const file = join(folder, "page.png");
    await writeFile(file, png);
    await writeFile(join(folder, "list.txt"), `${Array.from({ length: pages }, () => file).join("\n")}\n`);
    const started = performance.now();
    // One thread, as tesseract.js has: OpenMP threads on a shared 2-core machine only contend.
    const env = { ...process.env, OMP_THREAD_LIMIT: "1" };
    const { stdout } = await run(NATIVE, [join(folder, "list.txt"), "stdout", ...model, "-l", "eng", "--oem", "1"], { maxBuffer: 64 * 1024 * 1024, env });
    return { seconds: (performance.now() - started) / 1000, text: stdout.split("\f")[0] ?? "" };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

export async function benchOcr(): Promise<Row[]> {
  const lines = pageLines(42);
  const png = a4Page(lines);
  const expected = lines.join("\n");
  const warm = await parseDocument("png", png); // starts the engine
  const started = performance.now();
  for (let page = 0; page < PAGES; page++) await parseDocument("png", png);
  const ours = PAGES / ((performance.now() - started) / 1000);
  await closeOcr();
  const rows: Row[] = [
    { name: "OCR, 300 dpi A4 text page (tesseract.js, parse path)", value: ours, unit: "pages/s" },
    { name: "OCR character error rate, same page (ours)", value: characterErrorRate(expected, warm.text ?? ""), unit: "ratio" },
  ];
  try {
    const same = await native(png, PAGES, true);
    const debian = await native(png, PAGES, false);
    rows.push(
      { name: "OCR, same page, native tesseract with our model (anchor)", value: PAGES / same.seconds, unit: "pages/s" },
      { name: "OCR ours / native tesseract, same model", value: ours / (PAGES / same.seconds), unit: "ratio" },
      { name: "OCR, same page, native tesseract with Debian's fast model", value: PAGES / debian.seconds, unit: "pages/s" },
      { name: "OCR ours / native tesseract with Debian's fast model", value: ours / (PAGES / debian.seconds), unit: "ratio" },
      {
        name: "OCR character error rate, same page (native, our model / Debian's)",
        value: Math.max(characterErrorRate(expected, same.text), characterErrorRate(expected, debian.text)),
        unit: "ratio",
      },
    );
  } catch (error) {
    process.stderr.write(`bench: native tesseract not run (${(error as Error).message.split("\n")[0]}); install tesseract-ocr for the anchor\n`);
  }
  return rows;
}

const LOAD = { fileSize: 1024, connections: 16, warmupMs: 1000, roundMs: 3000, rounds: 3 };
const OCR_BACKLOG = 12;

export async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function unfinishedRuns(db: BenchDatabase["db"]): Promise<number> {
  const rows = await db.selectFrom("runs").select("id").where("status", "in", ["queued", "running"]).execute();
  return rows.length;
}

async function scanRuns(db: BenchDatabase["db"], pipeId: string, status: "running" | "completed"): Promise<number> {
  const rows = await db.selectFrom("runs").select("id").where("pipe_id", "=", pipeId).where("status", "=", status).execute();
  return rows.length;
}

/** The best of a few rounds of 1 KiB uploads, in requests per second. */
export async function edgeRate(url: string, key: string): Promise<number> {
  const spec = (durationMs: number) => ({ url, headers: { "x-api-key": key }, fileSize: LOAD.fileSize, durationMs, connections: LOAD.connections });
  await runLoad(spec(LOAD.warmupMs));
  let best = 0;
  for (let round = 0; round < LOAD.rounds; round++) {
    const result = await runLoad(spec(LOAD.roundMs));
    best = Math.max(best, result.ok / (result.elapsedMs / 1000));
  }
  return best;
}

/**
 * The edge's 1 KiB throughput while the same process OCRs a backlog of scanned A4 pages, as a ratio
 * to its throughput without them (both with the worker on, parsing the uploads' PDFs as they come).
 * Today parse runs in the worker's process: tesseract.js in its own thread, sharp in libvips threads.
 */
export async function benchEdgeWhileOcr(): Promise<Row[]> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  try {
    const tenant = await benchTenant(bench.clients, 20);
    const scans = await benchPipe(bench.clients, tenant.organizationId, ["png"], 20);
    const server = await spawnEdge(bench.url, storage.dir, [], { DOCPIPE_ROLES: "edge,services,worker" }); // `npm start` as it ships: edge, services and a worker in one process.
    try {
      const url = triggerUrl(server.url, tenant);
      const without = await edgeRate(url, tenant.keyValue);
      // The worker parses the uploads' runs; once they are done, the scans are the only work queued.
      await until(async () => (await unfinishedRuns(bench.db)) === 0, 180_000);
      const page = a4Page(pageLines(42));
      for (let scan = 0; scan < OCR_BACKLOG; scan++) {
        const body = new FormData();
        body.append("file", new Blob([page], { type: "image/png" }), `scan-${scan}.png`);
        const response = await fetch(`${server.url}/pipes/${scans}/trigger`, { method: "POST", headers: { "x-api-key": tenant.keyValue }, body });
        if (response.status !== 202) throw new Error(`a scan was refused: ${response.status} ${await response.text()}`);
      }
      await until(async () => (await scanRuns(bench.db, scans, "running")) > 0, 30_000);
      const during = await edgeRate(url, tenant.keyValue);
      const done = await scanRuns(bench.db, scans, "completed");
      if (done === OCR_BACKLOG) throw new Error("the OCR backlog ran out before the measurement ended; make it longer");
      return [
        { name: "Edge 1 KiB throughput, worker on, no OCR", value: Math.round(without), unit: "req/s" },
        {
          name: `Edge 1 KiB throughput while the process OCRs scanned A4 pages (${done} of ${OCR_BACKLOG} read meanwhile)`,
          value: Math.round(during),
          unit: "req/s",
        },
        { name: "Edge throughput while OCR runs / without", value: Math.round((during / without) * 1000) / 1000, unit: "ratio" },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    await storage.remove();
    await bench.drop();
  }
}
