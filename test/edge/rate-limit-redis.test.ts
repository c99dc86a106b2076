import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSharedCounters } from "../../src/inbound/http/shared-counters.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { createTenant, type EdgeHarness, startEdge } from "../support/edge.ts";

// CI sets REDIS_URL (.ci/run starts the local Redis); without it there is no shared store to test.
const redisUrl = process.env.REDIS_URL;

describe.skipIf(redisUrl === undefined)("rate limits shared through Redis (REDIS_URL)", () => {
  const connections: Redis[] = [];
  let first: EdgeHarness;
  let second: EdgeHarness;
  beforeAll(async () => {
    const connect = () => {
      const redis = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
      connections.push(redis);
      return redis;
    };
    // Forwarded addresses are believed from loopback, so each run counts its own (random) client address.
    const env = { AUTH_FAILURES_PER_MINUTE: "4", TRUST_PROXY: "127.0.0.1" };
    first = await startEdge(env, connect());
    second = await startEdge(env, connect());
    return async () => {
      await first.close();
      await second.close();
    };
  });
  afterAll(() => {
    for (const redis of connections) redis.disconnect();
  });

  async function submit(edge: EdgeHarness, pipeId: string, key: string, headers: Record<string, string> = {}) {
    const body = new FormData();
    body.append("file", new Blob([SAMPLES.pdf.bytes], { type: "application/pdf" }), "a.pdf");
    const response = await fetch(`${edge.url}/pipes/${pipeId}/trigger`, { method: "POST", headers: { "x-api-key": key, ...headers }, body });
    await response.arrayBuffer();
    return response;
  }

  it("two edge processes count one key's requests together", async () => {
    const tenant = await createTenant(first.clients, {}, "free");
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await submit(i % 2 === 0 ? first : second, tenant.pipeId, tenant.keyValue)).status);
    expect(statuses).toEqual(Array(10).fill(202));
    const limited = await submit(second, tenant.pipeId, tenant.keyValue);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("two edge processes count one address's failed authentications together", async () => {
    const tenant = await createTenant(first.clients);
    // A random documentation address: counters in the shared Redis outlive a run by up to a minute.
    const client = { "x-forwarded-for": `2001:db8:${randomBytes(2).toString("hex")}:${randomBytes(2).toString("hex")}::1` };
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await submit(i % 2 === 0 ? first : second, tenant.pipeId, "dp_bad", client)).status);
    expect(statuses).toEqual([401, 401, 401, 401]);
    const limited = await submit(second, tenant.pipeId, "dp_bad", client);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await submit(first, tenant.pipeId, tenant.keyValue, client)).status).toBe(202);
  });
});

/** Whether this machine has a Redis server to start (the tests' machines do; `npm test` elsewhere skips this). */
const redisServerInstalled = spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

describe.skipIf(!redisServerInstalled)("a Redis that stops answering", () => {
  it("lets submissions through within its command timeout, as an unreachable one does (they waited for as long as it was stopped)", async () => {
    // A port the system has just handed out, not a random one: a random port could be another
    // test server's, and pinging that one failed until the test's time ran out.
    const port = await freePort();
    const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    const redis = connectSharedCounters(`redis://127.0.0.1:${port}`, { warn: () => {} });
    try {
      await waitUntilReady(redis);
      const edge = await startEdge({}, redis);
      try {
        const tenant = await createTenant(edge.clients);
        const submit = async () => {
          const body = new FormData();
          body.append("file", new Blob([SAMPLES.pdf.bytes], { type: "application/pdf" }), "a.pdf");
          const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, {
            method: "POST",
            headers: { "x-api-key": tenant.keyValue },
            body,
            signal: AbortSignal.timeout(10_000),
          });
          await response.arrayBuffer();
          return response.status;
        };
        expect(await submit()).toBe(202);
        // Stopped, not gone: its connection stays open and its commands are never answered.
        process.kill(server.pid!, "SIGSTOP");
        expect(await submit()).toBe(202);
      } finally {
        process.kill(server.pid!, "SIGKILL");
        await edge.close();
      }
    } finally {
      server.kill("SIGKILL");
      redis.disconnect();
    }
  });
});

/** A port free on 127.0.0.1 a moment ago (the system's choice for a listener on port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once the server answers a PING (it has just been started). */
async function waitUntilReady(redis: Redis): Promise<void> {
  for (let tries = 0; ; tries++) {
    try {
      await redis.ping();
      return;
    } catch (error) {
      if (tries > 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
