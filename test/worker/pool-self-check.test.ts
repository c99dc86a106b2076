import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import type { ServiceClients } from "../../src/api/clients.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { TaskPool } from "../../src/documents/pool/task-pool.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { poolSelfCheck } from "../../src/runs/engine/pool-self-check.ts";
import { closeSharedTaskPool, sharedTaskPool } from "./fixtures.ts";

afterAll(closeSharedTaskPool);

describe("the parse pool's start-up self-check", () => {
  it("passes once a pool parses the built-in sample", async () => {
    await expect(poolSelfCheck(sharedTaskPool())()).resolves.toBeUndefined();
  });

  it("fails with the reason when the pool's processes cannot start, each call trying again, and /readyz answers 503 with it", async () => {
    // A process that cannot start, as one whose user cannot reach the code could not (exit code 126).
    const broken = new TaskPool({ size: 1, timeoutMs: 20_000, memoryMb: 256, recycleMb: 64, entry: "/nonexistent/task-entry.ts" });
    try {
      const ready = poolSelfCheck(broken);
      const reason = "the parse pool cannot parse a sample document: its process died while starting (exit code 1)";
      await expect(ready()).rejects.toMatchObject({ name: "NotReadyError", message: reason });
      await expect(ready()).rejects.toMatchObject({ name: "NotReadyError", message: reason });

      const app = await buildApp({ clients: {} as ServiceClients, store: new FileStore("/nonexistent"), log: pino({ level: "silent" }), ready });
      const response = await app.inject({ method: "GET", url: "/readyz" });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ code: "service_unavailable", detail: reason });
      await app.close();
    } finally {
      await broken.destroy();
    }
  });
});
