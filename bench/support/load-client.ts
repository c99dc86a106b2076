// Load generator, run in its own process so its work never shares the server's event loop.
// Reads a LoadSpec (JSON) from argv[2], prints a LoadResult (JSON) on stdout and exits.
// Closed loop: `connections` workers each send their next request when the last one ends.
// Open loop: requests start on a fixed schedule; latency counts from the scheduled start, so a
// stalled server cannot hide its queueing delay (no coordinated omission).
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
}

/** Open loops get this many sockets at most, so a slow server queues requests instead of opening without bound. */
const OPEN_LOOP_MAX_SOCKETS = 64;

/** Ids unique across load processes: a random high half, a counter below. */
let nextId = BigInt(randomBytes(4).readUInt32BE()) << 32n;

/** Sends `body` with a new file id written into it; the caller must not reuse `body` before this settles. */
function send(agent: Agent, spec: LoadSpec, body: Buffer): Promise<number> {
  stampBody(body, nextId++);
  return new Promise((resolve) => {
    const req = request(
      spec.url,
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

async function run(spec: LoadSpec): Promise<LoadResult> {
  const template = multipartBody(spec.fileSize);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.rate === undefined ? spec.connections : OPEN_LOOP_MAX_SOCKETS });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const start = performance.now();
  const deadline = start + spec.durationMs;
  const record = (status: number, startedAt: number) => {
    latencies.push(performance.now() - startedAt);
    statuses[status] = (statuses[status] ?? 0) + 1;
  };

  if (spec.rate === undefined) {
    const worker = async () => {
      const body = Buffer.from(template);
      while (performance.now() < deadline) {
        const startedAt = performance.now();
        record(await send(agent, spec, body), startedAt);
      }
    };
    await Promise.all(Array.from({ length: spec.connections }, worker));
  } else {
    const interval = 1000 / spec.rate;
    const pending: Promise<void>[] = [];
    for (let i = 0; start + i * interval < deadline; i++) {
      const scheduled = start + i * interval;
      const wait = scheduled - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(send(agent, spec, Buffer.from(template)).then((status) => record(status, scheduled)));
    }
    await Promise.all(pending);
  }
  const elapsedMs = performance.now() - start;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const ok = Object.entries(statuses)
    .filter(([status]) => status.startsWith("2"))
    .reduce((sum, [, count]) => sum + count, 0);
  return {
    requests: latencies.length,
    ok,
    statuses,
    failures: statuses["0"] ?? 0,
    elapsedMs,
    latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN },
    ...(spec.rate === undefined ? {} : { sortedLatenciesMs: latencies.map((latency) => Math.round(latency * 10) / 10) }),
  };
}

if (import.meta.main) {
  process.stdout.write(JSON.stringify(await run(JSON.parse(process.argv[2]!) as LoadSpec)));
}
