import { readdir, readFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { percentile } from "./support/median.ts";
import { createBenchDatabase } from "./support/database.ts";
import type { LoadResult } from "./support/load-client.ts";
import { freePort, runClient, runLoad, type ServerProcess, sleep } from "./support/processes.ts";
import { type BenchResult, type BenchRow, KIB } from "./support/report.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import type { BurstAnswers, BurstSpec } from "./support/sign-in-burst.ts";
import { benchTenant, type Tenant } from "./support/tenants.ts";

// What one tenant sends beside everyone else's work (issue 46), each beside the 1 KiB edge load:
// 2,000 idle SMTP connections against the email trigger (the slowest /healthz, the edge's answers),
// and another organization's RPCs during a 1,000-attempt sign-in burst on one account.

const CONNECTIONS = 16;
const ROUND_MS = 3000;
const HEALTH_PROBE_MS = 50;
const SMTP_CONNECTIONS = 2000;
/** The flood comes from this many loopback addresses (127.0.x.y), as a botnet's would: the per-address cap alone does not stop it. */
const SMTP_ADDRESSES = 200;
const SIGN_IN_BURST = 1000;
/** The burst's addresses, as the burst of issue 46 came from. */
const SIGN_IN_ADDRESSES = 100;
/** Rounds with a burst, each after a round without one. */
const BURST_PAIRS = 3;
/** Another organization's callers, each making one call after the other. */
const OTHER_CALLERS = 4;
const INTERNAL_TOKEN = "bench-internal-token";

/** The soft limit on open files of this process (/proc/self/limits), which holds the flood's sockets. */
async function openFilesLimit(): Promise<number> {
  const limits = await readFile("/proc/self/limits", "utf8");
  return Number(/^Max open files\s+(\d+)/m.exec(limits)?.[1] ?? 0);
}

/** Samples /healthz until stopped; the slowest answer. */
function probeHealth(server: ServerProcess) {
  let slowestMs = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      await fetch(`${server.url}/healthz`).then((response) => response.arrayBuffer());
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await sleep(HEALTH_PROBE_MS);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return slowestMs;
    },
  };
}

const edgeLoad = (server: ServerProcess, tenant: Tenant) =>
  runLoad({ url: triggerUrl(server.url, tenant), headers: { "x-api-key": tenant.keyValue }, fileSize: KIB, durationMs: ROUND_MS, connections: CONNECTIONS });

/** One edge round with /healthz probed beside it. */
async function edgeRound(server: ServerProcess, tenant: Tenant): Promise<{ load: LoadResult; slowestHealthMs: number }> {
  const health = probeHealth(server);
  const load = await edgeLoad(server, tenant);
  return { load, slowestHealthMs: await health.stop() };
}

/** Opens `count` connections to the SMTP port, each from one of SMTP_ADDRESSES addresses; resolves with each one's first reply code. */
async function smtpFlood(port: number, count: number): Promise<{ sockets: Socket[]; greetings: Map<string, number> }> {
  const sockets: Socket[] = [];
  const greetings = new Map<string, number>();
  await Promise.all(
    Array.from({ length: count }, (_, index) => {
      const localAddress = `127.0.${1 + Math.floor((index % SMTP_ADDRESSES) / 250)}.${1 + ((index % SMTP_ADDRESSES) % 250)}`;
      const socket = connect({ port, host: "127.0.0.1", localAddress });
      sockets.push(socket);
      socket.on("error", () => {});
      return new Promise<void>((resolve) => {
        socket.once("data", (chunk: Buffer) => {
          const code = chunk.toString("latin1", 0, 3);
          greetings.set(code, (greetings.get(code) ?? 0) + 1);
          resolve();
        });
        socket.once("close", () => resolve());
      });
    }),
  );
  return { sockets, greetings };
}

/** Descriptors the server process holds open. */
async function descriptorsOf(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

/** A Connect call (JSON over HTTP/1.1) to the server's internal port. */
async function rpc(
  baseUrl: string,
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/docpipe.v1.${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Another organization's calls, one after the other per caller, until `until` resolves: their latencies (in order made) and failures. */
async function otherCalls(baseUrl: string, organizationId: string, until: Promise<unknown>) {
  let done = false;
  void until.then(() => (done = true));
  const latencies: number[] = [];
  const failures = new Map<number, number>();
  const operator = { authorization: `Bearer ${INTERNAL_TOKEN}` };
  await Promise.all(
    Array.from({ length: OTHER_CALLERS }, async (_, caller) => {
      while (!done) {
        const started = performance.now();
        const { status } =
          caller % 2 === 0
            ? await rpc(baseUrl, "WorkspaceService/ListWorkspaces", { organizationId, pageSize: 10 }, operator)
            : await rpc(baseUrl, "WorkspaceService/GetOrganization", { organizationId }, operator);
        latencies.push(performance.now() - started);
        if (status !== 200) failures.set(status, (failures.get(status) ?? 0) + 1);
      }
    }),
  );
  return { latencies, failures: [...failures.values()].reduce((sum, count) => sum + count, 0) };
}

/** Rounds' latencies pooled: their count and p99. */
function pooled(rounds: readonly { latencies: number[] }[]): { calls: number; p99: number } {
  const latencies = rounds.flatMap((round) => round.latencies).sort((a, b) => a - b);
  return { calls: latencies.length, p99: percentile(latencies, 99) };
}

/**
 * SIGN_IN_BURST callers from SIGN_IN_ADDRESSES addresses, each guessing a wrong password for one
 * account until `deadline`, in a process of their own (sign-in-burst.ts); their answers by code.
 */
function signInBurst(baseUrl: string, email: string, honourRetryAfter: boolean): Promise<BurstAnswers> {
  const spec: BurstSpec = {
    url: `${baseUrl}/docpipe.v1.AccountService/SignIn`,
    email,
    callers: SIGN_IN_BURST,
    addresses: SIGN_IN_ADDRESSES,
    durationMs: ROUND_MS,
    honourRetryAfter,
  };
  return runClient("bench/support/sign-in-burst.ts", spec);
}

export async function benchInbound(): Promise<BenchResult> {
  if ((await openFilesLimit()) < SMTP_CONNECTIONS + 500) {
    throw new Error(`the bench holds ${SMTP_CONNECTIONS} SMTP connections: raise its open-files limit (ulimit -n ${SMTP_CONNECTIONS + 500})`);
  }
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  const emailPort = await freePort();
  const internalPort = await freePort();
  let server: ServerProcess | undefined;
  const rows: BenchRow[] = [];
  try {
    const tenant = await benchTenant(bench.clients, 20);
    server = await spawnEdge(bench.url, storage.dir, [], {
      EMAIL_PORT: String(emailPort),
      EMAIL_HOST: "127.0.0.1",
      INTERNAL_PORT: String(internalPort),
      INTERNAL_TOKEN,
    });
    await edgeLoad(server, tenant); // warm-up

    // 2,000 SMTP connections held open beside the edge load.
    const quiet = await edgeRound(server, tenant);
    const flood = await smtpFlood(emailPort, SMTP_CONNECTIONS);
    const descriptors = await descriptorsOf(server.pid);
    const flooded = await edgeRound(server, tenant);
    for (const socket of flood.sockets) socket.destroy();
    const label = `edge 1 KiB beside ${SMTP_CONNECTIONS} SMTP connections from ${SMTP_ADDRESSES} addresses`;
    const greeted = [...flood.greetings].map(([code, count]) => `${code} ${count}`).join(", ");
    rows.push(
      { name: `${label}: slowest /healthz, no SMTP connections`, value: Math.round(quiet.slowestHealthMs), unit: "ms" },
      { name: `${label}: slowest /healthz`, value: Math.round(flooded.slowestHealthMs), unit: "ms", target: { op: "<=", value: 250 } },
      {
        name: `${label}: edge answers that were not 2xx`,
        value: flooded.load.requests - flooded.load.ok,
        unit: "requests",
        target: { op: "<=", value: 0 },
      },
      {
        name: `${label}: edge throughput / without`,
        value: Math.round((flooded.load.ok / flooded.load.elapsedMs / (quiet.load.ok / quiet.load.elapsedMs)) * 1000) / 1000,
        unit: "ratio",
      },
      { name: `${label}: the server's open descriptors (connections greeted: ${greeted})`, value: descriptors, unit: "descriptors" },
    );

    // A 1,000-attempt sign-in burst on one account, beside the edge load and another organization's
    // calls: rounds without a burst and with one alternate (BURST_PAIRS of each, each burst on an
    // account of its own), so the machine's load moving from one minute to the next falls on both;
    // each side's latencies are pooled. Bursts whose callers wait as a refusal's Retry-After says
    // carry the targets; then (rows without a target) bursts whose callers send their next attempt at once.
    const baseUrl = `http://127.0.0.1:${internalPort}`;
    const operator = { authorization: `Bearer ${INTERNAL_TOKEN}` };
    const victimOrg = (await rpc(baseUrl, "WorkspaceService/CreateOrganization", { name: "burst target" }, operator)).body.organization as { id: string };
    const victims: string[] = [];
    for (let victim = 0; victim < 2 * BURST_PAIRS; victim++) {
      const email = `victim-${victim}@example.com`;
      const { invitationToken } = (await rpc(baseUrl, "MemberService/CreateInvitation", { organizationId: victimOrg.id, email, role: "ROLE_MEMBER" }, operator))
        .body as { invitationToken: string };
      await rpc(baseUrl, "AccountService/AcceptInvitation", { invitationToken, name: "Victim", password: "the right password" });
      victims.push(email);
    }
    const otherOrg = (await rpc(baseUrl, "WorkspaceService/CreateOrganization", { name: "bystander" }, operator)).body.organization as { id: string };

    const round = async (burstOn: { email: string; honourRetryAfter: boolean } | undefined) => {
      const load = edgeLoad(server!, tenant);
      const burst: Promise<BurstAnswers> = burstOn === undefined ? Promise.resolve({}) : signInBurst(baseUrl, burstOn.email, burstOn.honourRetryAfter);
      const calls = await otherCalls(baseUrl, otherOrg.id, Promise.all([load, burst]));
      const [edge, signIns] = await Promise.all([load, burst]);
      return { ...calls, edge, signIns };
    };
    for (const [honourRetryAfter, label, targets] of [
      [true, "", true],
      [false, ", its callers retrying at once (Retry-After ignored)", false],
    ] as const) {
      const quietRounds: Awaited<ReturnType<typeof round>>[] = [];
      const burstRounds: Awaited<ReturnType<typeof round>>[] = [];
      for (let pair = 0; pair < BURST_PAIRS; pair++) {
        quietRounds.push(await round(undefined));
        burstRounds.push(await round({ email: victims.shift()!, honourRetryAfter }));
      }
      const quiet = pooled(quietRounds);
      const burst = pooled(burstRounds);
      const signIns = new Map<string, number>();
      for (const { signIns: answers } of burstRounds) for (const [code, count] of Object.entries(answers)) signIns.set(code, (signIns.get(code) ?? 0) + count);
      const burstLabel = `another organization's calls (${OTHER_CALLERS} callers) beside the edge 1 KiB load during a ${SIGN_IN_BURST}-attempt sign-in burst on one account from ${SIGN_IN_ADDRESSES} addresses${label}, ${BURST_PAIRS} rounds`;
      const target = (op: "<=", value: number) => (targets ? { target: { op, value } } : {});
      rows.push(
        {
          name: `${burstLabel}: failed calls (of ${burst.calls})`,
          value: burstRounds.reduce((sum, { failures }) => sum + failures, 0),
          unit: "calls",
          ...target("<=", 0),
        },
        {
          name: `${burstLabel}: edge answers that were not 2xx`,
          value: burstRounds.reduce((sum, { edge }) => sum + edge.requests - edge.ok, 0),
          unit: "requests",
          ...target("<=", 0),
        },
        { name: `${burstLabel}: p99, no burst (${quiet.calls} calls, rounds alternating with the bursts)`, value: Math.round(quiet.p99 * 10) / 10, unit: "ms" },
        { name: `${burstLabel}: p99`, value: Math.round(burst.p99 * 10) / 10, unit: "ms" },
        { name: `${burstLabel}: p99 / without`, value: Math.round((burst.p99 / quiet.p99) * 100) / 100, unit: "ratio", ...target("<=", 2) },
        {
          name: `${burstLabel}: sign-in answers`,
          value: [...signIns.values()].reduce((sum, count) => sum + count, 0),
          unit: [...signIns].map(([code, count]) => `${code} ${count}`).join(", "),
        },
      );
    }
    return { rows, sections: [] };
  } finally {
    await server?.stop();
    await bench.drop();
    await storage.remove();
  }
}
