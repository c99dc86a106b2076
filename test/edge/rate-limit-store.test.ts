import { Code } from "@connectrpc/connect";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { ServiceClients } from "../../src/api/clients.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { MAX_COUNTERS, WindowCounterStore } from "../../src/inbound/http/rate-limit-store.ts";
import { TRIGGER_PERMISSION } from "../../src/platform/keys/permissions.ts";
import { serviceError } from "../../src/api/errors.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { sleep } from "../support/wait.ts";

function incr(store: WindowCounterStore, key: string, timeWindow: number) {
  let state = { current: 0, ttl: 0 };
  store.incr(key, (_error, result) => (state = result), timeWindow);
  return state;
}

describe("WindowCounterStore", () => {
  it("counts within a window and starts again after it", async () => {
    const store = new WindowCounterStore();
    expect(incr(store, "a", 50).current).toBe(1);
    expect(incr(store, "a", 50)).toMatchObject({ current: 2 });
    expect(incr(store, "a", 50).ttl).toBeLessThanOrEqual(50);
    await sleep(60);
    expect(incr(store, "a", 50).current).toBe(1);
  });

  it("drops counters whose window has ended, once per window", async () => {
    const store = new WindowCounterStore();
    for (let i = 0; i < 100; i++) incr(store, `k${i}`, 30);
    expect(store.size).toBe(100);
    await sleep(40);
    incr(store, "fresh", 30);
    expect(store.size).toBe(1);
  });

  it("keeps at most MAX_COUNTERS counters (+1): keys past that share one counter until the window's sweep", () => {
    const store = new WindowCounterStore();
    for (let i = 0; i < MAX_COUNTERS; i++) incr(store, `k${i}`, 60_000);
    expect(incr(store, "k0", 60_000).current).toBe(2);
    expect(incr(store, "invented-1", 60_000).current).toBe(1);
    expect(incr(store, "invented-2", 60_000).current).toBe(2);
    expect(incr(store, "invented-3", 60_000).current).toBe(3);
    expect(store.size).toBe(MAX_COUNTERS + 1);
    let read = { current: 0, ttl: 0 };
    store.read("invented-4", (_error, state) => (read = state));
    expect(read.current).toBe(3);
  });
});

describe("WindowCounterStore.decr", () => {
  it("a count given back after its window ended does not take from the next window's count", async () => {
    // The email trigger counts a message in takeMessage, then gives it back if recording its runs
    // fails; recording can outlast the end of the hour's window.
    const store = new WindowCounterStore();
    const windowOfA = store.take("pipe", 50); // message A is counted in the first window
    await sleep(60); // the window ends while A's runs are being recorded
    incr(store, "pipe", 50); // message B is counted in the new window
    store.decr("pipe", windowOfA); // A failed: its count is given back
    let read = { current: 0, ttl: 0 };
    store.read("pipe", (_error, state) => (read = state));
    // It was 0: B's count was taken back, so one more message than the limit passed this window.
    expect(read.current).toBe(1);
    // Within its window, a give-back takes the count back.
    const windowOfC = store.take("pipe", 50);
    store.decr("pipe", windowOfC);
    store.read("pipe", (_error, state) => (read = state));
    expect(read.current).toBe(1);
  });
});

describe("per-key rate limits hold with more active keys than the plugin's LRU (5,000) keeps", () => {
  it("a key's counter survives 6,000 other keys within its minute", async () => {
    // Every key value authenticates as its own key on a plan of 1 request per minute; the pipe is not found.
    const clients = {
      trigger: {
        authenticateKey: async ({ keyValue }: { keyValue: string }) => ({
          organizationId: "org",
          keyId: keyValue,
          permissions: [TRIGGER_PERMISSION],
          plan: "tiny",
          rateLimitPerMinute: 1,
        }),
        resolveTrigger: async () => {
          throw serviceError(Code.NotFound, "pipe_not_found", "pipe not found or not active");
        },
      },
    } as unknown as ServiceClients;
    const app = await buildApp({ clients, store: new FileStore("/nonexistent"), log: pino({ level: "silent" }), ready: async () => {} });
    const submit = (key: string) => app.inject({ method: "POST", url: "/pipes/p/trigger", headers: { "x-api-key": key } });

    expect((await submit("key-0")).statusCode).toBe(404);
    for (let i = 1; i <= 6000; i++) await submit(`key-${i}`);
    const again = await submit("key-0");
    expect(again.statusCode).toBe(429);
    expect(again.json()).toMatchObject({ code: "rate_limited" });
    await app.close();
  });
});
