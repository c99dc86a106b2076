import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import type { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { corsDelegator, corsOptionsOf, PREFLIGHT_LOOKUPS_PER_MINUTE } from "../../src/inbound/http/cors.ts";

const ORIGIN = "https://app.example";

function preflight(pipeId: string, client = "192.0.2.1") {
  return { method: "OPTIONS", url: `/pipes/${pipeId}/trigger`, headers: { origin: ORIGIN }, client } as unknown as FastifyRequest;
}

/** The client address each test request names (the edge passes its counted address). */
const clientOf = (request: FastifyRequest) => (request as unknown as { client: string }).client;

/** A TriggerService client that answers every pipe with ORIGIN allowed, counting lookups by pipe id. */
function countingPipes() {
  const lookups: string[] = [];
  const pipes = { getTriggerOrigins: async ({ pipeId }: { pipeId: string }) => (lookups.push(pipeId), { allowedOrigins: [ORIGIN] }) };
  return { pipes: pipes as unknown as Client<typeof TriggerService>, lookups };
}

/** The delegator's answers as promises. */
function promised(delegator: ReturnType<typeof corsDelegator>) {
  return (request: FastifyRequest) => corsOptionsOf(delegator, request);
}

describe("preflight origin lookups", () => {
  it("a pipe id that is not UUID-shaped (16 KB of it) is neither looked up nor cached, and gets no CORS headers", async () => {
    const { pipes, lookups } = countingPipes();
    const delegate = promised(corsDelegator(pipes, clientOf));
    for (let i = 0; i < 1000; i++) {
      expect(await delegate(preflight(`${i}-${"x".repeat(16 * 1024)}`))).toEqual({ origin: false });
    }
    expect(lookups).toEqual([]);
  });

  it("a UUID-shaped pipe id is looked up once and then served from the cache, whatever its letter case", async () => {
    const { pipes, lookups } = countingPipes();
    const delegate = promised(corsDelegator(pipes, clientOf));
    const pipeId = randomUUID();
    expect(await delegate(preflight(pipeId))).toMatchObject({ origin: ORIGIN });
    expect(await delegate(preflight(pipeId.toUpperCase()))).toMatchObject({ origin: ORIGIN });
    expect(lookups).toEqual([pipeId]);
  });

  it("one client address causes at most PREFLIGHT_LOOKUPS_PER_MINUTE lookups of fresh pipe ids; cached pipes and other clients are still served", async () => {
    const { pipes, lookups } = countingPipes();
    const delegate = promised(corsDelegator(pipes, clientOf));
    const known = randomUUID();
    expect(await delegate(preflight(known))).toMatchObject({ origin: ORIGIN });
    for (let i = 1; i < PREFLIGHT_LOOKUPS_PER_MINUTE; i++) expect(await delegate(preflight(randomUUID()))).toMatchObject({ origin: ORIGIN });
    expect(lookups).toHaveLength(PREFLIGHT_LOOKUPS_PER_MINUTE);

    // Over its budget: fresh ids get no CORS headers and cost no query.
    for (let i = 0; i < 100; i++) expect(await delegate(preflight(randomUUID()))).toEqual({ origin: false });
    expect(lookups).toHaveLength(PREFLIGHT_LOOKUPS_PER_MINUTE);
    // A pipe already cached is answered without a lookup; another client has its own budget.
    expect(await delegate(preflight(known))).toMatchObject({ origin: ORIGIN });
    const other = randomUUID();
    expect(await delegate(preflight(other, "198.51.100.7"))).toMatchObject({ origin: ORIGIN });
    expect(lookups).toHaveLength(PREFLIGHT_LOOKUPS_PER_MINUTE + 1);
    expect(lookups.at(-1)).toBe(other);
  });
});
