import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
    first = await startEdge({}, connect());
    second = await startEdge({}, connect());
  });
  afterAll(() => {
    for (const redis of connections) redis.disconnect();
  });

  async function submit(edge: EdgeHarness, pipeId: string, key: string) {
    const body = new FormData();
    body.append("file", new Blob([SAMPLES.pdf.bytes], { type: "application/pdf" }), "a.pdf");
    const response = await fetch(`${edge.url}/pipes/${pipeId}/trigger`, { method: "POST", headers: { "x-api-key": key }, body });
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
});
