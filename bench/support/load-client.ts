// Load generator, run in its own process so its work never shares the server's event loop.
// Reads a LoadSpec (JSON) from argv[2], prints a LoadResult (JSON) on stdout and exits.
// Closed loop: `connections` workers each send their next request when the last one ends.
// Open loop: requests start on a fixed schedule; latency counts from the scheduled start, so a
// stalled server cannot hide its queueing delay (no coordinated omission). An open loop may give
// several servers turns (`turns`): the schedule's requests go to one server for a slice, then to
// the next, so every server meets the same states of the disk within one run.
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { percentile } from "./median.ts";
import { MULTIPART_CONTENT_TYPE, multipartBody, stampBody } from "./multipart.ts";

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  fileSize: number;
  durationMs: number;
  connections: number;
  /** Requests per second for an open loop; absent for a closed loop. */
  rate?: number;
  /** Open loop only: further servers taking turns with `url`, each for `sliceMs` of the schedule in turn. */
  turns?: { urls: string[]; sliceMs: number };
}

export interface LoadResult {
  requests: number;
  /** Responses with a 2xx status. */
  ok: number;
  statuses: Record<string, number>;
  /** Requests that got no response (connection errors). */
  failures: number;
  elapsedMs: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** An open loop's every latency, ascending, to 0.1 ms: runs at one rate pool into one percentile. */
  sortedLatenciesMs?: number[];
  /** With `turns`: each server's own requests, `url`'s first; the fields above count them all. */
  byServer?: LoadResult[];
}

/** Open loops get this many sockets at most, so a slow server queues requests instead of opening without bound. */
const OPEN_LOOP_MAX_SOCKETS = 64;

/** Ids unique across load processes: a random high half, a counter below. */
let nextId = BigInt(randomBytes(4).readUInt32BE()) << 32n;

/** Sends `body` with a new file id written into it; the caller must not reuse `body` before this settles. */
function send(agent: Agent, url: string, spec: LoadSpec, body: Buffer): Promise<number> {
  stampBody(body, nextId++);
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { ...spec.headers, "content-type": MULTIPART_CONTENT_TYPE, "content-length": body.length },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(0));
      },
    );
    req.on("error", () => resolve(0));
    req.end(body);
  });
}

/** Latencies and statuses of one server's requests. */
class Tally {
  readonly latencies: number[] = [];
  readonly statuses: Record<string, number> = {};

  add(status: number, latencyMs: number): void {
    this.latencies.push(latencyMs);
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
  }

  result(elapsedMs: number, open: boolean): LoadResult {
    const latencies = [...this.latencies].sort((a, b) => a - b);
    const ok = Object.entries(this.statuses)
      .filter(([status]) => status.startsWith("2"))
      .reduce((sum, [, count]) => sum + count, 0);
    return {
      requests: latencies.length,
      ok,
      statuses: this.statuses,
      failures: this.statuses["0"] ?? 0,
      elapsedMs,
      latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN },
      ...(open ? { sortedLatenciesMs: latencies.map((latency) => Math.round(latency * 10) / 10) } : {}),
    };
  }
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const template = multipartBody(spec.fileSize);
  const urls = [spec.url, ...(spec.turns?.urls ?? [])];
  const agents = urls.map(() => new Agent({ keepAlive: true, maxSockets: spec.rate === undefined ? spec.connections : OPEN_LOOP_MAX_SOCKETS }));
  const all = new Tally();
  const byServer = urls.map(() => new Tally());
  const start = performance.now();
  const deadline = start + spec.durationMs;
  const record = (server: number, status: number, startedAt: number) => {
    const latency = performance.now() - startedAt;
    all.add(status, latency);
    if (spec.turns !== undefined) byServer[server]!.add(status, latency);
  };

  if (spec.rate === undefined) {
    const worker = async () => {
      const body = Buffer.from(template);
      while (performance.now() < deadline) {
        const startedAt = performance.now();
        record(0, await send(agents[0]!, spec.url, spec, body), startedAt);
      }
    };
    await Promise.all(Array.from({ length: spec.connections }, worker));
  } else {
    const interval = 1000 / spec.rate;
    const sliceMs = spec.turns?.sliceMs ?? Number.POSITIVE_INFINITY;
    const pending: Promise<void>[] = [];
    for (let i = 0; start + i * interval < deadline; i++) {
      const scheduled = start + i * interval;
      const server = Math.floor((i * interval) / sliceMs) % urls.length;
      const wait = scheduled - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(send(agents[server]!, urls[server]!, spec, Buffer.from(template)).then((status) => record(server, status, scheduled)));
    }
    await Promise.all(pending);
  }
  const elapsedMs = performance.now() - start;
  for (const agent of agents) agent.destroy();
  const open = spec.rate !== undefined;
  return {
    ...all.result(elapsedMs, open),
    ...(spec.turns === undefined ? {} : { byServer: byServer.map((server) => server.result(elapsedMs, open)) }),
  };
}

if (import.meta.main) {
  process.stdout.write(JSON.stringify(await run(JSON.parse(process.argv[2]!) as LoadSpec)));
}
