import { describe, expect, it } from "vitest";
import { ReadThroughCache } from "../../src/platform/cache/read-through-cache.ts";
import { sleep } from "../support/wait.ts";

function counted<V>(value: V, delayMs = 0) {
  const read = async () => {
    read.calls++;
    if (delayMs > 0) await sleep(delayMs);
    return value;
  };
  read.calls = 0;
  return read;
}

describe("ReadThroughCache", () => {
  it("reuses a found value within its time", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 1000 });
    const read = counted({ n: 1 });
    expect(await cache.get("a", read)).toEqual({ n: 1 });
    expect(await cache.get("a", read)).toEqual({ n: 1 });
    expect(read.calls).toBe(1);
  });

  it("keepIf: a value it refuses reaches every caller sharing the read, and is read again next time", async () => {
    const cache = new ReadThroughCache<{ live: boolean }>({ max: 10, ttlMs: 1000, keepIf: (value) => value.live });
    const read = counted({ live: false }, 20);
    expect(await Promise.all([cache.get("a", read), cache.get("a", read)])).toEqual([{ live: false }, { live: false }]);
    expect(read.calls).toBe(1);
    await cache.get("a", read);
    expect(read.calls).toBe(2);
  });

  it("counts a value's time from when its read began, not from when it was stored", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 100 });
    // The read takes 80 ms of the 100: the value may be reused for about 20 ms more, not 100.
    const slow = counted({ n: 1 }, 80);
    await cache.get("a", slow);
    await sleep(40);
    const fresh = counted({ n: 2 });
    expect(await cache.get("a", fresh)).toEqual({ n: 2 });
    expect(fresh.calls).toBe(1);
  });

  it("stores nothing from a read that outlasted the whole time", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 20 });
    await cache.get("a", counted({ n: 1 }, 40));
    const again = counted({ n: 2 });
    expect(await cache.get("a", again)).toEqual({ n: 2 });
  });

  it("remembers misses only when asked to, apart from the values", async () => {
    const forgetful = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 1000 });
    const missing = counted<{ n: number } | undefined>(undefined);
    await forgetful.get("x", missing);
    await forgetful.get("x", missing);
    expect(missing.calls).toBe(2);

    const remembering = new ReadThroughCache<{ n: number }>({ max: 2, ttlMs: 1000, missTtlMs: 1000 });
    const known = counted<{ n: number } | undefined>({ n: 1 });
    await remembering.get("known", known);
    const unknown = counted<{ n: number } | undefined>(undefined);
    for (let i = 0; i < 5; i++) await remembering.get(`unknown-${i % 2}`, unknown);
    expect(unknown.calls).toBe(2);
    // A flood of misses does not evict the values in use.
    for (let i = 0; i < 10; i++) await remembering.get(`flood-${i}`, unknown);
    await remembering.get("known", known);
    expect(known.calls).toBe(1);
  });

  it("concurrent lookups of one key share one read (a burst of one unknown key is one query)", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 1000, missTtlMs: 1000 });
    const unknown = counted<{ n: number } | undefined>(undefined, 20);
    const results = await Promise.all(Array.from({ length: 50 }, () => cache.get("burst", unknown)));
    expect(results).toEqual(Array(50).fill(undefined));
    expect(unknown.calls).toBe(1);
  });

  it("a lookup after clear() does not join a read that began before it", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 1000 });
    const before = cache.get("a", counted({ n: 1 }, 30));
    cache.clear();
    const fresh = counted({ n: 2 });
    expect(await cache.get("a", fresh)).toEqual({ n: 2 });
    expect(await before).toEqual({ n: 1 });
    expect(fresh.calls).toBe(1);
  });

  it("clear() forgets everything and voids reads that began before it", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 1000, missTtlMs: 1000 });
    const pending = cache.get("a", counted({ n: 1 }, 30));
    cache.clear();
    expect(await pending).toEqual({ n: 1 });
    const after = counted({ n: 2 });
    expect(await cache.get("a", after)).toEqual({ n: 2 });
    expect(after.calls).toBe(1);
  });

  // Past half of its 3 s: a second and a half of margin before it would expire, for a loaded machine.
  const TTL_MS = 3000;
  const PAST_HALF_MS = 1600;

  it("a value past half its time is answered at once and read again meanwhile; later lookups get what that read found", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: TTL_MS });
    await cache.get("a", counted({ n: 1 }));
    await sleep(PAST_HALF_MS);
    const { promise, resolve } = Promise.withResolvers<{ n: number }>();
    const refresh = Object.assign(async () => (refresh.calls++, promise), { calls: 0 });
    expect(await cache.get("a", refresh)).toEqual({ n: 1 });
    expect(refresh.calls).toBe(1);
    // Lookups while the read is in flight start no other.
    expect(await cache.get("a", refresh)).toEqual({ n: 1 });
    expect(refresh.calls).toBe(1);
    resolve({ n: 2 });
    await promise;
    await sleep(0);
    const unused = counted({ n: 3 });
    expect(await cache.get("a", unused)).toEqual({ n: 2 });
    expect(unused.calls).toBe(0);
  });

  it("a refresh that finds the value gone stops answering it; a failed refresh is forgotten", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: TTL_MS });
    await cache.get("gone", counted({ n: 1 }));
    await cache.get("failing", counted({ n: 1 }));
    await sleep(PAST_HALF_MS);
    const missing = counted<{ n: number } | undefined>(undefined);
    expect(await cache.get("gone", missing)).toEqual({ n: 1 });
    const failing = Object.assign(async () => (failing.calls++, Promise.reject(new Error("database down"))), { calls: 0 });
    expect(await cache.get("failing", failing)).toEqual({ n: 1 });
    await sleep(0);
    expect([missing.calls, failing.calls]).toEqual([1, 1]);
    const again = counted({ n: 2 });
    expect(await cache.get("gone", again)).toEqual({ n: 2 });
    expect(again.calls).toBe(1);
    // The failed read left the value in place, to be read again (the next lookup tries once more).
    expect(await cache.get("failing", failing)).toEqual({ n: 1 });
    await sleep(0);
    expect(failing.calls).toBe(2);
  });

  it("peek: the value held, without reading it; none for a key not held or past its time", async () => {
    const cache = new ReadThroughCache<{ n: number }>({ max: 10, ttlMs: 50 });
    expect(cache.peek("a")).toBeUndefined();
    const read = counted({ n: 1 });
    const value = await cache.get("a", read);
    expect(cache.peek("a")).toBe(value);
    expect(read.calls).toBe(1);
    await sleep(80);
    expect(cache.peek("a")).toBeUndefined();
  });
});
