import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import type { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { corsDelegator } from "../../src/edge/cors.ts";

const ORIGIN = "https://app.example";

function preflight(pipeId: string) {
  return { method: "OPTIONS", url: `/pipes/${pipeId}/trigger`, headers: { origin: ORIGIN } } as unknown as FastifyRequest;
}

/** A TriggerService client that answers every pipe with ORIGIN allowed, counting lookups by pipe id. */
function countingPipes() {
  const lookups: string[] = [];
  const pipes = { getTriggerOrigins: async ({ pipeId }: { pipeId: string }) => (lookups.push(pipeId), { allowedOrigins: [ORIGIN] }) };
  return { pipes: pipes as unknown as Client<typeof TriggerService>, lookups };
}

describe("preflight origin lookups", () => {
  it("a pipe id that is not UUID-shaped (16 KB of it) is neither looked up nor cached, and gets no CORS headers", async () => {
    const { pipes, lookups } = countingPipes();
    const delegate = corsDelegator(pipes);
    for (let i = 0; i < 1000; i++) {
      expect(await delegate(preflight(`${i}-${"x".repeat(16 * 1024)}`))).toEqual({ origin: false });
    }
    expect(lookups).toEqual([]);
  });

  it("a UUID-shaped pipe id is looked up once and then served from the cache, whatever its letter case", async () => {
    const { pipes, lookups } = countingPipes();
    const delegate = corsDelegator(pipes);
    const pipeId = randomUUID();
    expect(await delegate(preflight(pipeId))).toMatchObject({ origin: ORIGIN });
    expect(await delegate(preflight(pipeId.toUpperCase()))).toMatchObject({ origin: ORIGIN });
    expect(lookups).toEqual([pipeId]);
  });
});
