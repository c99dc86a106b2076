import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBenchDatabase } from "./support/database.ts";
import type { LoadSpec } from "./support/load-client.ts";
import { mean, percentile } from "./support/median.ts";
import { runLoad, type ServerProcess, sleep } from "./support/processes.ts";
import { type BenchResult, type BenchRow, KIB, markdownTable } from "./support/report.ts";
import { spawnBare, spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchTenant } from "./support/tenants.ts";

// The profiling pass of the edge (issue 50): where the wall time of one 1 KiB submission goes,
// step by step, ours beside bare, under the edge part's closed-loop load. Both servers run with
// DOCPIPE_STEP_TIMING (src/platform/observability/step-timing.ts), which the measured runs of `BENCH=edge`
// never set: this part's rates are not compared with anything.

const CONNECTIONS = 16;
const WARMUP_MS = 1000;
const ROUND_MS = 3000;
const ROUNDS = 3;

type StepDurations = Record<string, number[]>;

/** Each step's mean, median and p99 in ms, and how often it ran per request. */
function stepRows(label: string, durations: StepDurations): string[][] {
  const requests = durations["total, from the first check"]?.length ?? 0;
  return Object.entries(durations).map(([step, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return [label, step, (values.length / requests).toFixed(2), mean(values).toFixed(3), percentile(sorted, 50).toFixed(3), percentile(sorted, 99).toFixed(2)];
  });
}

export async function benchSubmissionSteps(): Promise<BenchResult> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  const timingDir = await mkdtemp(join(tmpdir(), "docpipe-steps-"));
  const files = { ours: join(timingDir, "ours.json"), bare: join(timingDir, "bare.json") };
  try {
    const tenant = await benchTenant(bench.clients, 20);
    const servers: Record<"ours" | "bare", ServerProcess> = {
      ours: await spawnEdge(bench.url, storage.dir, [], { DOCPIPE_STEP_TIMING: files.ours }),
      bare: await spawnBare(bench.url, storage.dir, tenant.organizationId, [], {}, { DOCPIPE_STEP_TIMING: files.bare }),
    };
    const urls = { ours: triggerUrl(servers.ours.url, tenant), bare: `${servers.bare.url}/upload` };
    const spec = (which: "ours" | "bare", durationMs: number): LoadSpec => ({
      url: urls[which],
      headers: { "x-api-key": tenant.keyValue },
      fileSize: KIB,
      durationMs,
      connections: CONNECTIONS,
    });
    const served = { ours: 0, bare: 0 };
    try {
      for (const which of ["ours", "bare"] as const) {
        await runLoad(spec(which, WARMUP_MS));
        // Forget the warm-up's timings (StepTiming clears on SIGUSR2), and let the signal land.
        process.kill(servers[which].pid, "SIGUSR2");
      }
      await sleep(100);
      for (let round = 0; round < ROUNDS; round++) {
        for (const which of round % 2 === 0 ? (["ours", "bare"] as const) : (["bare", "ours"] as const)) {
          served[which] += (await runLoad(spec(which, ROUND_MS))).ok;
        }
      }
    } finally {
      for (const server of Object.values(servers)) await server.stop();
    }
    const ours = JSON.parse(await readFile(files.ours, "utf8")) as StepDurations;
    const bare = JSON.parse(await readFile(files.bare, "utf8")) as StepDurations;
    const rows: BenchRow[] = [
      { name: "Submission steps, 1 KiB: requests served with step timing, ours", value: served.ours, unit: "requests" },
      { name: "Submission steps, 1 KiB: requests served with step timing, bare", value: served.bare, unit: "requests" },
    ];
    const table = markdownTable(["server", "step", "per request", "mean ms", "p50 ms", "p99 ms"], [...stepRows("ours", ours), ...stepRows("bare", bare)]);
    const section = [
      `### The steps of a 1 KiB submission (${CONNECTIONS} connections, closed loop, ${ROUNDS} rounds of ${ROUND_MS / 1000} s each)`,
      "",
      "Wall time of each step (DOCPIPE_STEP_TIMING); bare's CreateRun is its one-row INSERT.",
      "",
      table,
    ].join("\n");
    return { rows, sections: [section] };
  } finally {
    await rm(timingDir, { recursive: true, force: true });
    await storage.remove();
    await bench.drop();
  }
}

if (import.meta.main) {
  const result = await benchSubmissionSteps();
  console.log(result.sections.join("\n\n"));
}
