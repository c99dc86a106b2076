import { execFile } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { addCpuBetween, CPU_PARTS, type CpuSeconds, cpuSnapshot } from "./support/cpu.ts";
import { type BenchDatabase, createBenchDatabase } from "./support/database.ts";
import type { LoadResult, LoadSpec } from "./support/load-client.ts";
import { pdfBytes } from "./support/multipart.ts";
import { memoryOf, runLoad, type ServerProcess, sleep } from "./support/processes.ts";
import { readProfile, summarizeProfile, type ProfileSummary } from "./support/profile.ts";
import { median, percentile } from "./support/median.ts";
import { type BenchResult, type BenchRow, KIB, markdownTable, MIB } from "./support/report.ts";
import { spawnBare, spawnEdge, startEdgeInProcess, tempStorage, triggerUrl } from "./support/servers.ts";
import { startScriptNodeFlags } from "./support/start-flags.ts";
import { StoredFiles, waitForRemovalsToAge } from "./support/stored-files.ts";
import { benchTenant, type Tenant } from "./support/tenants.ts";
import { uploadStreamed } from "./support/upload.ts";

// The REST edge against a bare Fastify + multipart route, both in their own processes, the load
// generator in a third; then latency, memory under big uploads, and early refusal of big bodies.

const CONNECTIONS = 16;
const WARMUP_MS = 1000;
const ROUND_MS = 3000;
/**
 * Rounds per size, a whole number of ROUND_ORDERS' cycles. One server's rate moves by a fifth or more
 * between rounds a few seconds apart on a shared host, and the same-round ratio by ±0.15
 * (bench/README.md, 2026-12-07): the median of n rounds' ratios moves about 1/√n as much as one
 * round's, so ±0.04 at 1 KiB, where the target is judged by a tenth.
 */
const SIZES = [
  { label: "1 KiB", bytes: KIB, target: 0.9, rounds: 24 },
  { label: "1 MiB", bytes: MIB, target: 0.95, rounds: 12 },
  { label: "10 MiB", bytes: 10 * MIB, target: 0.95, rounds: 12 },
];
const LATENCY_MS = 5000;
const LATENCY_PAUSE_MS = 5000;
/** The run in which ours and bare take turns at half our rate: its length, and each turn's. */
const TURNS_MS = 40_000;
const TURN_MS = 1000;
const BIG_UPLOADS = 8;
const BIG_UPLOAD_BYTES = 100 * MIB;
const RSS_SAMPLE_MS = 20;
/** "Far below 100 MB": what a refused request may read of its body (the limit, socket buffers). */
const REFUSED_READ_LIMIT_KIB = 10 * 1024;

/**
 * What the throughput rounds compare: ours as `npm start` runs it, the bare baseline on plain Node,
 * and the bare baseline with our Node flags (so the flags' own share of the ratio is visible).
 */
const CONTENDERS = ["ours", "bare", "bareWithOurFlags"] as const;
type Contender = (typeof CONTENDERS)[number];
type Bare = Exclude<Contender, "ours">;

/**
 * The order of the servers in each round, in turn: every order of the three, arranged so that over
 * six rounds each server runs right after each other server equally often (twice within rounds,
 * once from one round to the next; the sixth round's last and the first's first close the cycle).
 * A server's round inherits what the one before it left (the disk's writeback of its files, its
 * sockets in TIME_WAIT, PostgreSQL's dirty pages): with the first server merely rotating, ours always
 * ran right after bare with our flags, the fastest writer.
 */
const ROUND_ORDERS: readonly (readonly Contender[])[] = [
  ["ours", "bare", "bareWithOurFlags"],
  ["bare", "bareWithOurFlags", "ours"],
  ["bareWithOurFlags", "ours", "bare"],
  ["ours", "bareWithOurFlags", "bare"],
  ["bareWithOurFlags", "bare", "ours"],
  ["bare", "ours", "bareWithOurFlags"],
];

/**
 * Every ratio's baseline: the faster of the two bare configurations in the same run, so no flag can
 * flatter us. A configuration is judged by the median of its rounds, then compared best round with
 * best round: the best of either configuration's rounds would set ours's best of n rounds against
 * the best of 2n samples of what is nearly one speed, a bias of its own (the row kept beside the
 * target's shows its size).
 */
function fasterBare(roundRates: Record<Contender, number[]>): Bare {
  return median(roundRates.bareWithOurFlags) > median(roundRates.bare) ? "bareWithOurFlags" : "bare";
}

interface Servers {
  processes: Record<Contender, ServerProcess>;
  urls: Record<Contender, string>;
  stored: StoredFiles;
}

function requestsPerSecond(result: LoadResult, server: ServerProcess): number {
  if (result.ok !== result.requests) {
    throw new Error(`load got non-2xx answers: ${JSON.stringify(result.statuses)}; server exited: ${server.exited()}, stderr: ${server.stderr()}`);
  }
  return result.ok / (result.elapsedMs / 1000);
}

/** CPU seconds a server's rounds used, by part, and the requests they served. */
interface RoundsCpu {
  seconds: CpuSeconds;
  requests: number;
}

interface Throughput {
  /** Requests per second of each contender in each round, in round order. */
  roundRates: Record<Contender, number[]>;
  cpu: Record<Contender, RoundsCpu>;
}

/**
 * `rounds` closed-loop rounds for each contender, in the orders of ROUND_ORDERS in turn so that drift
 * and what one server leaves the next hit all alike; with the CPU every round used, by part. The
 * rounds begin once the files stored before them are removed and every removal is a minute old;
 * within them, files are removed before a round only once they fill the bench's share of the disk
 * (StoredFiles): at 1 KiB, never.
 */
async function throughput(servers: Servers, tenant: Tenant, fileSize: number, rounds: number): Promise<Throughput> {
  const urls = { ...servers.urls, ours: triggerUrl(servers.processes.ours.url, tenant) };
  const spec = (url: string, durationMs: number): LoadSpec => ({
    url,
    headers: { "x-api-key": tenant.keyValue },
    fileSize,
    durationMs,
    connections: CONNECTIONS,
  });
  // What the sizes before stored goes first, so that no round meets its removal.
  await servers.stored.clear();
  await waitForRemovalsToAge();
  for (const which of CONTENDERS) servers.stored.added((await runLoad(spec(urls[which], WARMUP_MS))).ok, fileSize);
  const result = {
    roundRates: Object.fromEntries(CONTENDERS.map((which) => [which, []])),
    cpu: Object.fromEntries(CONTENDERS.map((which) => [which, { seconds: new Map(), requests: 0 }])),
  } as unknown as Throughput;
  for (let round = 0; round < rounds; round++) {
    // After a clear, an unmeasured load: the first server to write after thousands of files were
    // removed meets the file system's search past the freed inodes at its worst (see StoredFiles).
    if (await servers.stored.clearIfFull()) servers.stored.added((await runLoad(spec(urls.bare, WARMUP_MS))).ok, fileSize);
    for (const which of ROUND_ORDERS[round % ROUND_ORDERS.length]!) {
      const server = servers.processes[which];
      const before = await cpuSnapshot(server.pid);
      const load = await runLoad(spec(urls[which], ROUND_MS));
      addCpuBetween(result.cpu[which].seconds, before, await cpuSnapshot(server.pid));
      result.cpu[which].requests += load.ok;
      servers.stored.added(load.ok, fileSize);
      result.roundRates[which].push(requestsPerSecond(load, server));
    }
  }
  return result;
}

/** Each round's rate of each server, in round order, with ours over the round's bare of each kind. */
function roundsSection(bySize: { label: string; roundRates: Throughput["roundRates"] }[]): string {
  const names: Record<Contender, string> = { ours: "ours", bare: "bare", bareWithOurFlags: "bare, our flags" };
  const rows = bySize.flatMap(({ label, roundRates }) => [
    ...CONTENDERS.map((which) => [`${label}: ${names[which]}, req/s`, ...roundRates[which].map((rate) => rate.toFixed(0))]),
    ...(["bare", "bareWithOurFlags"] as const).map((bare) => [
      `${label}: ours / ${names[bare]}`,
      ...roundRates.ours.map((rate, round) => (rate / roundRates[bare][round]!).toFixed(3)),
    ]),
  ]);
  const width = Math.max(...rows.map((row) => row.length));
  return [
    "### Each throughput round",
    "",
    `Rates in round order (each round runs the servers one after another, every order of the three in turn), ${CONNECTIONS} connections.`,
    "",
    markdownTable(
      ["", ...Array.from({ length: width - 1 }, (_, round) => `round ${round + 1}`)],
      rows.map((row) => [...row, ...Array.from({ length: width - row.length }, () => "")]),
    ),
  ].join("\n");
}

/** Milliseconds of CPU per request, by part, for each size and server. */
function cpuSection(bySize: { label: string; cpu: Throughput["cpu"] }[]): string {
  const perRequest = ({ seconds, requests }: RoundsCpu, part: string) => (((seconds.get(part) ?? 0) * 1000) / requests).toFixed(2);
  const names: Record<Contender, string> = { ours: "ours", bare: "bare", bareWithOurFlags: "bare, our flags" };
  const table = markdownTable(
    ["CPU ms per request", ...bySize.flatMap(({ label }) => CONTENDERS.map((which) => `${names[which]} ${label}`))],
    CPU_PARTS.map((part) => [part, ...bySize.flatMap(({ cpu }) => CONTENDERS.map((which) => perRequest(cpu[which], part)))]),
  );
  return [
    "### Where each request's CPU goes (/proc, every throughput round)",
    "",
    `CPU time over the measured rounds divided by the requests served, ${CONNECTIONS} connections. The`,
    "whole machine's figure includes the load generator; at 1 MiB and more the machine also waits on the disk.",
    "",
    table,
  ].join("\n");
}

/** Pairs of latency runs, one of each server, the order alternating from pair to pair. */
const LATENCY_PAIRS = 5;

/** An open loop of 1 KiB submissions to `url` at `rate` for `durationMs`. */
function pacedSpec(url: string, tenant: Tenant, rate: number, durationMs: number): LoadSpec {
  return { url, headers: { "x-api-key": tenant.keyValue }, fileSize: KIB, durationMs, connections: CONNECTIONS, rate };
}

/** Fails the bench unless bare answered every request with a 2xx: a bare refusal answers fast, which would shorten bare's tail and flatter the ratio. */
function requireBareAnsweredAll(run: LoadResult, rate: number): void {
  if (run.ok !== run.requests) throw new Error(`bare got non-2xx answers at ${rate} req/s: ${JSON.stringify(run.statuses)}`);
}

/**
 * Latency of 1 KiB submissions paced at half of our maximum rate, open loop; bare at the same rate
 * for comparison (the disk's fsync stalls reach both). LATENCY_PAIRS pairs of runs, ours then bare,
 * then bare then ours, and so on, after a pause that lets PostgreSQL's checkpoint of the throughput
 * rounds pass and an unmeasured run of each at the rate. Reported: the p99 of all of a
 * server's requests at that rate, its runs pooled (the target's row: a single run's p99 swings by a factor of three with the disk's fsync stalls, and
 * each pool holds every stall its server met; a few stalls set a pool's p99, so where the disk
 * stalls often the ratio leans towards 1); each server's run with the lower p99 (the target's row
 * before 2026-11-28); and the median of the pairs' own p99 ratios (the two runs of a pair meet the
 * same state of the disk). Every request of every run must succeed, bare's too.
 */
async function latencyAtHalfRate(servers: Servers, tenant: Tenant, maxRate: number, bare: Bare): Promise<BenchRow[]> {
  const rate = Math.round(maxRate / 2);
  await sleep(LATENCY_PAUSE_MS);
  const paced = (which: "ours" | "bare") => pacedSpec(servers.urls[which === "ours" ? "ours" : bare], tenant, rate, LATENCY_MS);
  // One unmeasured run of each at the rate: the first run after the closed loop meets its leftover writes.
  for (const which of ["bare", "ours"] as const) await runLoad(paced(which));
  const best: Partial<Record<"ours" | "bare", LoadResult>> = {};
  const pooled: Record<"ours" | "bare", number[]> = { ours: [], bare: [] };
  const pairRatios: number[] = [];
  let failed = 0;
  for (let pair = 0; pair < LATENCY_PAIRS; pair++) {
    const p99s: Partial<Record<"ours" | "bare", number>> = {};
    for (const which of pair % 2 === 0 ? (["ours", "bare"] as const) : (["bare", "ours"] as const)) {
      const run = await runLoad(paced(which));
      if (which === "ours") failed += run.requests - run.ok;
      else requireBareAnsweredAll(run, rate);
      if (best[which] === undefined || run.latencyMs.p99 < best[which].latencyMs.p99) best[which] = run;
      pooled[which].push(...run.sortedLatenciesMs!);
      p99s[which] = run.latencyMs.p99;
    }
    pairRatios.push(p99s.ours! / p99s.bare!);
  }
  for (const latencies of Object.values(pooled)) latencies.sort((a, b) => a - b);
  const server = (which: "ours" | "bare") => (which === "ours" ? which : `the faster bare (${bare})`);
  const name = (which: string) => `Latency 1 KiB at ${rate} req/s (half of our max), open loop, better of ${LATENCY_PAIRS} runs: ${which}`;
  const p99 = (which: "ours" | "bare") => Math.round(best[which]!.latencyMs.p99 * 10) / 10;
  const pooledName = (which: string) => `Latency 1 KiB at ${rate} req/s (half of our max), open loop, all ${LATENCY_PAIRS} runs' requests: ${which}`;
  const pooledPercentile = (which: "ours" | "bare", p: number) => percentile(pooled[which], p);
  return [
    ...(["ours", "bare"] as const).flatMap((which) => [
      { name: `${pooledName(server(which))}: p50`, value: pooledPercentile(which, 50), unit: "ms" },
      { name: `${pooledName(server(which))}: p99`, value: pooledPercentile(which, 99), unit: "ms" },
    ]),
    {
      name: `Latency 1 KiB at ${rate} req/s: p99 ours / bare, all runs' requests`,
      value: Math.round((pooledPercentile("ours", 99) / pooledPercentile("bare", 99)) * 100) / 100,
      unit: "ratio",
      target: { op: "<=", value: 1.5 },
    },
    ...(["ours", "bare"] as const).flatMap((which) => [
      { name: `${name(server(which))}: p50`, value: Math.round(best[which]!.latencyMs.p50 * 10) / 10, unit: "ms" },
      { name: `${name(server(which))}: p99`, value: p99(which), unit: "ms" },
    ]),
    {
      name: `Latency 1 KiB at ${rate} req/s: p99 ours / bare, better run of each (the target's row before 2026-11-28)`,
      value: Math.round((p99("ours") / p99("bare")) * 100) / 100,
      unit: "ratio",
    },
    {
      name: `Latency 1 KiB at ${rate} req/s: p99 ours / bare, median of ${LATENCY_PAIRS} pairs' ratios`,
      value: Math.round(median(pairRatios) * 100) / 100,
      unit: "ratio",
    },
    { name: `Latency 1 KiB at ${rate} req/s: ours, non-2xx in every run`, value: failed, unit: "requests", target: { op: "<=", value: 0 } },
  ];
}

/**
 * Latency of 1 KiB submissions at half of our maximum rate, open loop, in one run where ours and
 * bare take turns every TURN_MS (ours first): the schedule's requests go to one server for a turn,
 * then to the other. The pairs of latencyAtHalfRate give each server whole 5 s runs, and on a host
 * whose disk stalls in bursts of seconds one server's pool may hold a burst the other never met
 * (the pooled p99 ratio read 0.53–1.84 in one set of three on one host); turns of a second give
 * both servers the same spells of the disk, so their tails differ by what each server does.
 * Reported: each server's p50 and p99 over its turns, and the p99s' ratio.
 */
async function latencyInTurns(servers: Servers, tenant: Tenant, maxRate: number, bare: Bare): Promise<BenchRow[]> {
  const rate = Math.round(maxRate / 2);
  const run = await runLoad({ ...pacedSpec(servers.urls.ours, tenant, rate, TURNS_MS), turns: { urls: [servers.urls[bare]], sliceMs: TURN_MS } });
  const [ours, baseline] = run.byServer!;
  requireBareAnsweredAll(baseline!, rate);
  const name = (which: string) =>
    `Latency 1 KiB at ${rate} req/s, open loop, ours and bare taking turns every ${TURN_MS / 1000} s for ${TURNS_MS / 1000} s: ${which}`;
  const server = { ours: ours!, [`the faster bare (${bare})`]: baseline! };
  return [
    ...Object.entries(server).flatMap(([which, result]) => [
      { name: `${name(which)}: p50`, value: Math.round(result.latencyMs.p50 * 10) / 10, unit: "ms" },
      { name: `${name(which)}: p99`, value: Math.round(result.latencyMs.p99 * 10) / 10, unit: "ms" },
    ]),
    { name: name("p99 ours / bare"), value: Math.round((ours!.latencyMs.p99 / baseline!.latencyMs.p99) * 100) / 100, unit: "ratio" },
    { name: name("ours, non-2xx"), value: ours!.requests - ours!.ok, unit: "requests", target: { op: "<=", value: 0 } },
  ];
}

/** What V8's collections did, from its --trace-gc-nvp lines: promoted by scavenges, their count and pauses, full collections, and bytes allocated (each line's allocation since the collection before it). */
interface GcTotals {
  promotedBytes: number;
  scavenges: number;
  scavengePauseMs: number;
  fullCollections: number;
  allocatedBytes: number;
}

function gcTotals(nvp: string): GcTotals {
  const totals: GcTotals = { promotedBytes: 0, scavenges: 0, scavengePauseMs: 0, fullCollections: 0, allocatedBytes: 0 };
  const field = (line: string, name: string) => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
  for (const line of nvp.split("\n")) {
    if (/ gc=s /.test(line)) {
      totals.promotedBytes += field(line, "promoted");
      totals.scavenges++;
      totals.scavengePauseMs += field(line, "pause");
    } else if (/ gc=mc /.test(line)) totals.fullCollections++;
    else continue;
    totals.allocatedBytes += field(line, "allocated");
  }
  return totals;
}

/**
 * What V8's collections did per 1 KiB request, paced at `rate` for LATENCY_MS: bytes promoted to the
 * old generation, bytes allocated, scavenges and their mean pause, and the full collections in that
 * time. A scavenge stops the main thread, so the requests it meets wait for it: how often they come
 * (allocation) times how long each holds (what survives it, mostly what promotion counts) is the
 * share of the tail the collector sets; promoted garbage brings the full collections.
 */
async function gcAtRate(
  start: (nodeArgs: string[]) => Promise<ServerProcess>,
  url: (server: ServerProcess) => string,
  tenant: Tenant,
  rate: number,
): Promise<GcTotals & { requests: number }> {
  const server = await start(["--trace-gc-nvp"]);
  try {
    const spec = { url: url(server), headers: { "x-api-key": tenant.keyValue }, fileSize: KIB, connections: CONNECTIONS };
    await runLoad({ ...spec, durationMs: WARMUP_MS });
    const from = server.stdout().length;
    const result = await runLoad({ ...spec, durationMs: LATENCY_MS, rate });
    return { ...gcTotals(server.stdout().slice(from)), requests: result.ok };
  } finally {
    await server.stop();
  }
}

async function gcRows(bench: BenchDatabase, storageDir: string, tenant: Tenant, rate: number, bare: Bare): Promise<BenchRow[]> {
  const bareFlags = bare === "bareWithOurFlags" ? startScriptNodeFlags() : [];
  const ours = await gcAtRate(
    (nodeArgs) => spawnEdge(bench.url, storageDir, nodeArgs, {}, { keepStdout: true }),
    (server) => triggerUrl(server.url, tenant),
    tenant,
    rate,
  );
  const baseline = await gcAtRate(
    (nodeArgs) => spawnBare(bench.url, storageDir, tenant.organizationId, [...bareFlags, ...nodeArgs], { keepStdout: true }),
    (server) => `${server.url}/upload`,
    tenant,
    rate,
  );
  const name = (which: string) => `1 KiB at ${rate} req/s for ${LATENCY_MS / 1000} s, ${which}`;
  const tenths = (value: number) => Math.round(value * 10) / 10;
  return Object.entries({ ours, [`the faster bare (${bare})`]: baseline }).flatMap(([which, gc]) => [
    { name: name(`${which}: promoted to the old generation per request`), value: tenths(gc.promotedBytes / KIB / gc.requests), unit: "KiB" },
    { name: name(`${which}: allocated per request`), value: Math.round(gc.allocatedBytes / KIB / gc.requests), unit: "KiB" },
    { name: name(`${which}: scavenges per 1,000 requests`), value: tenths((gc.scavenges * 1000) / gc.requests), unit: "scavenges" },
    { name: name(`${which}: mean scavenge pause`), value: gc.scavenges === 0 ? 0 : tenths(gc.scavengePauseMs / gc.scavenges), unit: "ms" },
    { name: name(`${which}: full collections`), value: gc.fullCollections, unit: "collections" },
  ]);
}

/** CPU profile of one server under the 1 KiB load, start-up excluded. */
async function profileUnderLoad(
  start: (nodeArgs: string[]) => Promise<ServerProcess>,
  url: (server: ServerProcess) => string,
  tenant: Tenant,
): Promise<{ summary: ProfileSummary; requests: number }> {
  const dir = await mkdtemp(join(tmpdir(), "docpipe-profile-"));
  const server = await start(["--cpu-prof", "--cpu-prof-dir", dir]);
  const spec = (durationMs: number): LoadSpec => ({
    url: url(server),
    headers: { "x-api-key": tenant.keyValue },
    fileSize: KIB,
    durationMs,
    connections: CONNECTIONS,
  });
  await runLoad(spec(WARMUP_MS));
  const fromUs = Number(process.hrtime.bigint() / 1000n);
  const result = await runLoad(spec(ROUND_MS));
  const toUs = Number(process.hrtime.bigint() / 1000n);
  await server.stop();
  const summary = summarizeProfile(await readProfile(dir), fromUs, toUs);
  await rm(dir, { recursive: true, force: true });
  return { summary, requests: result.ok };
}

function profileSection(ours: { summary: ProfileSummary; requests: number }, bare: { summary: ProfileSummary; requests: number }): string {
  const perRequest = (ms: number, requests: number) => (ms / requests).toFixed(3);
  const shown = 12;
  const names = [...new Set([...ours.summary.components.slice(0, shown), ...bare.summary.components.slice(0, shown)].map((component) => component.name))];
  const msOf = (summary: ProfileSummary, name: string) => summary.components.find((component) => component.name === name)?.ms ?? 0;
  const components = markdownTable(
    ["component", "ours ms/request", "bare ms/request"],
    [
      ["all (idle excluded)", perRequest(ours.summary.busyMs, ours.requests), perRequest(bare.summary.busyMs, bare.requests)],
      ...names.map((name) => [name, perRequest(msOf(ours.summary, name), ours.requests), perRequest(msOf(bare.summary, name), bare.requests)]),
    ],
  );
  const functions = markdownTable(
    ["function (ours)", "ms/request"],
    ours.summary.functions.map((fn) => [`\`${fn.name.trim()}\``, perRequest(fn.ms, ours.requests)]),
  );
  return [
    `### Where the edge's CPU goes (1 KiB files, ${CONNECTIONS} connections, node --cpu-prof, self time)`,
    "",
    `Server CPU per request, by component (the top ${shown} of each; \`(native)\` is time in`,
    "system calls and C++ such as socket writes to the client and to PostgreSQL, file opens and fsyncs).",
    "",
    components,
    "",
    functions,
  ].join("\n");
}

/** Peak RSS growth of a fresh edge process while BIG_UPLOADS clients each stream BIG_UPLOAD_BYTES. */
async function memoryUnderBigUploads(bench: BenchDatabase): Promise<BenchRow[]> {
  const storage = await tempStorage();
  const tenant = await benchTenant(bench.clients, 200);
  const server = await spawnEdge(bench.url, storage.dir);
  try {
    const url = triggerUrl(server.url, tenant);
    const headers = { "x-api-key": tenant.keyValue };
    // Warm the process up (code paths, pool, allocator) so start-up growth is not counted.
    await runLoad({ url, headers, fileSize: MIB, durationMs: WARMUP_MS, connections: 4 });
    await sleep(500);
    const baseline = (await memoryOf(server.pid)).rss;
    let peak = baseline;
    const sampler = setInterval(
      () =>
        void memoryOf(server.pid).then(
          ({ rss }) => (peak = Math.max(peak, rss)),
          () => {},
        ),
      RSS_SAMPLE_MS,
    );
    const started = performance.now();
    const uploads = await Promise.all(Array.from({ length: BIG_UPLOADS }, () => uploadStreamed(url, headers, BIG_UPLOAD_BYTES)));
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    return [
      {
        name: `${BIG_UPLOADS} × 100 MiB uploads at once: accepted (202)`,
        value: uploads.filter((upload) => upload.status === 202).length,
        unit: "uploads",
        target: { op: ">=", value: BIG_UPLOADS },
      },
      {
        name: `${BIG_UPLOADS} × 100 MiB uploads at once: peak server RSS growth`,
        value: (peak - baseline) / MIB,
        unit: "MiB",
        target: { op: "<=", value: 64 },
      },
      { name: `${BIG_UPLOADS} × 100 MiB uploads at once: server RSS before`, value: baseline / MIB, unit: "MiB" },
      { name: `${BIG_UPLOADS} × 100 MiB uploads at once: throughput`, value: (BIG_UPLOADS * BIG_UPLOAD_BYTES) / MIB / seconds, unit: "MiB/s" },
    ];
  } finally {
    await server.stop();
    await storage.remove();
  }
}

/** The bytes a server socket read before it closed, found by the client's local port. */
async function serverBytesRead(closed: Map<number, number>, clientPort: number): Promise<number> {
  // The edge keeps a refused connection half-open for a grace period (src/inbound/http/app.ts LINGER_MS).
  for (let waited = 0; waited < 5000 && !closed.has(clientPort); waited += 50) await sleep(50);
  return closed.get(clientPort) ?? NaN;
}

/**
 * A bad key and an oversized file against a 100 MiB body, from curl (Expect: 100-continue off, so
 * it sends the body at once) and from Node's http client: the client must get the problem document,
 * and the server must read far less than the body.
 */
async function refusedBigBodies(bench: BenchDatabase): Promise<BenchRow[]> {
  const storage = await tempStorage();
  const tenant = await benchTenant(bench.clients, 1);
  const edge = await startEdgeInProcess(bench.clients, storage.dir);
  const bigFile = join(storage.dir, "big.pdf");
  const handle = await open(bigFile, "w");
  const chunk = pdfBytes(MIB);
  for (let written = 0; written < BIG_UPLOAD_BYTES; written += MIB) await handle.write(chunk);
  await handle.close();
  const rows: BenchRow[] = [];
  try {
    const cases = [
      { label: "bad key", key: "dp_not_a_key", status: 401, code: "api_key_invalid" },
      { label: "file over the pipe's 1 MB", key: tenant.keyValue, status: 400, code: "file_too_large" },
    ];
    for (const { label, key, status, code } of cases) {
      const curl = await promisify(execFile)(
        "curl",
        [
          "-sS",
          "-H",
          "Expect:",
          "-H",
          `x-api-key: ${key}`,
          "-F",
          `file=@${bigFile};type=application/pdf`,
          "-w",
          "\n%{http_code} %{size_upload} %{local_port}",
          triggerUrl(edge.url, tenant),
        ],
        { maxBuffer: MIB },
      ).then(
        ({ stdout }) => stdout,
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}\n0 0 0 ${error.stderr ?? ""}`,
      );
      const [document = "", summary = ""] = curl.split("\n").slice(-2);
      const [curlStatus, curlSent, curlPort] = summary.split(" ").map(Number) as [number, number, number];
      const curlGotProblem = curlStatus === status && document.includes(`"code":"${code}"`);
      const curlRead = await serverBytesRead(edge.closedSocketBytesRead, curlPort);
      rows.push(
        { name: `100 MiB body, ${label}, curl: got ${status} ${code}`, value: curlGotProblem ? 1 : 0, unit: "yes=1", target: { op: ">=", value: 1 } },
        {
          name: `100 MiB body, ${label}, curl: bytes the server read`,
          value: curlRead / KIB,
          unit: "KiB",
          target: { op: "<=", value: REFUSED_READ_LIMIT_KIB },
        },
        { name: `100 MiB body, ${label}, curl: bytes curl sent`, value: curlSent / KIB, unit: "KiB" },
      );

      const node = await uploadStreamed(triggerUrl(edge.url, tenant), { "x-api-key": key }, BIG_UPLOAD_BYTES);
      const nodeRead = await serverBytesRead(edge.closedSocketBytesRead, node.localPort);
      rows.push(
        {
          name: `100 MiB body, ${label}, Node http client: got ${status} ${code}`,
          value: node.status === status && node.code === code ? 1 : 0,
          unit: "yes=1",
          target: { op: ">=", value: 1 },
        },
        {
          name: `100 MiB body, ${label}, Node http client: bytes the server read`,
          value: nodeRead / KIB,
          unit: "KiB",
          target: { op: "<=", value: REFUSED_READ_LIMIT_KIB },
        },
      );
    }
  } finally {
    await edge.close();
    await storage.remove();
  }
  return rows;
}

export async function benchEdge(): Promise<BenchResult> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  const rows: BenchRow[] = [];
  const sections: string[] = [];
  try {
    const tenant = await benchTenant(bench.clients, 20);
    const ourFlags = startScriptNodeFlags();
    const processes: Record<Contender, ServerProcess> = {
      ours: await spawnEdge(bench.url, storage.dir),
      bare: await spawnBare(bench.url, storage.dir, tenant.organizationId),
      bareWithOurFlags: await spawnBare(bench.url, storage.dir, tenant.organizationId, ourFlags),
    };
    const servers: Servers = {
      processes,
      urls: {
        ours: triggerUrl(processes.ours.url, tenant),
        bare: `${processes.bare.url}/upload`,
        bareWithOurFlags: `${processes.bareWithOurFlags.url}/upload`,
      },
      stored: new StoredFiles(storage.dir),
    };
    const cpuBySize: { label: string; cpu: Throughput["cpu"] }[] = [];
    const roundsBySize: { label: string; roundRates: Throughput["roundRates"] }[] = [];
    let halfRate: { rate: number; bare: Bare } | undefined;
    const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
    const names: Record<Bare, string> = { bare: "bare", bareWithOurFlags: `bare with our Node flags (${ourFlags.join(" ")})` };
    try {
      for (const size of SIZES) {
        // Each size submits as an organization of its own: no worker takes the runs, and the queued
        // runs of an earlier size would lengthen every read of the organization's count (a scan of
        // them about twice a second; 9 ms at 60,000). Not one per round: a new organization's
        // first uploads make its 256 folders, which the warm-ups make otherwise (clears keep them).
        const sizeTenant = size.bytes === KIB ? tenant : await benchTenant(bench.clients, 20);
        const { roundRates, cpu } = await throughput(servers, sizeTenant, size.bytes, size.rounds);
        cpuBySize.push({ label: size.label, cpu });
        roundsBySize.push({ label: size.label, roundRates });
        const rate = Object.fromEntries(CONTENDERS.map((which) => [which, Math.max(...roundRates[which])])) as Record<Contender, number>;
        const baseline = fasterBare(roundRates);
        // Each round's three runs follow one another, so drift between rounds cancels in its ratio.
        const roundRatios = roundRates.ours.map((ours, round) => ours / roundRates[baseline][round]!);
        const roundRatiosToEither = roundRates.ours.map((ours, round) => ours / Math.max(roundRates.bare[round]!, roundRates.bareWithOurFlags[round]!));
        rows.push(
          { name: `Throughput ${size.label}: ours`, value: Math.round(rate.ours), unit: "req/s" },
          { name: `Throughput ${size.label}: bare`, value: Math.round(rate.bare), unit: "req/s" },
          { name: `Throughput ${size.label}: ${names.bareWithOurFlags}`, value: Math.round(rate.bareWithOurFlags), unit: "req/s" },
          {
            name: `Throughput ${size.label}: ours / the faster bare by median of rounds (${names[baseline]}), best round of each`,
            value: ratio(rate.ours, rate[baseline]),
            unit: "ratio",
            target: { op: ">=", value: size.target },
          },
          {
            name: `Throughput ${size.label}: ours / ${names[baseline]} in the same round, median of ${size.rounds} rounds`,
            value: ratio(median(roundRatios), 1),
            unit: "ratio",
          },
          {
            name: `Throughput ${size.label}: ours / the faster of both bares in the same round, median of ${size.rounds} rounds (the row before 2026-11-28)`,
            value: ratio(median(roundRatiosToEither), 1),
            unit: "ratio",
          },
          {
            name: `Throughput ${size.label}: ours / the best round of either bare (best of ${size.rounds} against best of ${2 * size.rounds}, the row before 2026-11-28)`,
            value: ratio(rate.ours, Math.max(rate.bare, rate.bareWithOurFlags)),
            unit: "ratio",
          },
        );
        // Right after its maximum was measured, while the machine is in the same state.
        if (size.bytes === KIB) {
          rows.push(...(await latencyAtHalfRate(servers, tenant, rate.ours, baseline)));
          rows.push(...(await latencyInTurns(servers, tenant, rate.ours, baseline)));
          halfRate = { rate: Math.round(rate.ours / 2), bare: baseline };
        }
      }
    } finally {
      for (const server of Object.values(processes)) await server.stop();
    }
    sections.push(roundsSection(roundsBySize), cpuSection(cpuBySize));
    if (halfRate !== undefined) rows.push(...(await gcRows(bench, storage.dir, tenant, halfRate.rate, halfRate.bare)));

    const oursProfile = await profileUnderLoad(
      (nodeArgs) => spawnEdge(bench.url, storage.dir, nodeArgs),
      (server) => triggerUrl(server.url, tenant),
      tenant,
    );
    const bareProfile = await profileUnderLoad(
      (nodeArgs) => spawnBare(bench.url, storage.dir, tenant.organizationId, nodeArgs),
      (server) => `${server.url}/upload`,
      tenant,
    );
    sections.push(profileSection(oursProfile, bareProfile));

    rows.push(...(await memoryUnderBigUploads(bench)));
    rows.push(...(await refusedBigBodies(bench)));
    return { rows, sections };
  } finally {
    await storage.remove();
    await bench.drop();
  }
}

if (import.meta.main) {
  const { resultsTable } = await import("./support/report.ts");
  const result = await benchEdge();
  console.log(resultsTable(result.rows) + "\n\n" + result.sections.join("\n\n"));
}
