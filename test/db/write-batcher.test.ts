import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WriteBatcher } from "../../src/data/db/write-batcher.ts";

/** A write the test finishes by hand: each call's items, and a way to settle it. */
function heldWrites() {
  const calls: { items: number[]; settle: (outcome: "ok" | Error) => void }[] = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ items, settle: (outcome) => (outcome === "ok" ? resolve(items.map((item) => `row ${item}`)) : reject(outcome)) });
    });
  return { calls, write };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("WriteBatcher", () => {
  it("writes a lone item at once, alone", async () => {
    const { calls, write } = heldWrites();
    const batcher = new WriteBatcher(write, { maxInFlight: 1, maxBatch: 10, mayBeOneItems: () => true });
    const result = batcher.add(1);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1]]);
    calls[0]!.settle("ok");
    expect(await result).toBe("row 1");
  });

  it("gathers the items that arrive while its writes are in flight into one batch, and gives each its own result", async () => {
    const { calls, write } = heldWrites();
    const batcher = new WriteBatcher(write, { maxInFlight: 2, maxBatch: 10, mayBeOneItems: () => true });
    const first = batcher.add(1);
    await settled();
    const second = batcher.add(2);
    await settled();
    const waiting = [3, 4, 5].map((item) => batcher.add(item));
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2]]);
    calls[1]!.settle("ok");
    expect(await second).toBe("row 2");
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2], [3, 4, 5]]);
    calls[2]!.settle("ok");
    calls[0]!.settle("ok");
    expect(await Promise.all([first, ...waiting])).toEqual(["row 1", "row 3", "row 4", "row 5"]);
  });

  it("puts calls of one tick in one batch, and no more than maxBatch items in a batch", async () => {
    const { calls, write } = heldWrites();
    const batcher = new WriteBatcher(write, { maxInFlight: 2, maxBatch: 2, mayBeOneItems: () => true });
    const results = [1, 2, 3, 4, 5].map((item) => batcher.add(item));
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    calls[0]!.settle("ok");
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1, 2], [3, 4], [5]]);
    calls[1]!.settle("ok");
    calls[2]!.settle("ok");
    expect(await Promise.all(results)).toEqual(["row 1", "row 2", "row 3", "row 4", "row 5"]);
  });

  it("writes a failed batch again item by item, so only the item at fault fails", async () => {
    const refused = new Error("row 2 refused by a constraint");
    const batcher = new WriteBatcher(
      async (items: number[]) => {
        if (items.includes(2)) throw refused;
        return items.map((item) => `row ${item}`);
      },
      { maxInFlight: 1, maxBatch: 10, mayBeOneItems: () => true },
    );
    const results = await Promise.allSettled([1, 2, 3].map((item) => batcher.add(item)));
    expect(results).toEqual([
      { status: "fulfilled", value: "row 1" },
      { status: "rejected", reason: refused },
      { status: "fulfilled", value: "row 3" },
    ]);
  });

  it("writes a failed batch's items again one at a time, within its place in flight (a large batch cannot take the whole pool)", async () => {
    let writing = 0;
    let mostAtOnce = 0;
    const batcher = new WriteBatcher(
      async (items: number[]) => {
        mostAtOnce = Math.max(mostAtOnce, ++writing);
        await new Promise((resolve) => setTimeout(resolve, 1));
        writing--;
        if (items.length > 1) throw new Error("one row refused");
        return items.map((item) => `row ${item}`);
      },
      { maxInFlight: 1, maxBatch: 10, mayBeOneItems: () => true },
    );
    const results = await Promise.all([1, 2, 3, 4].map((item) => batcher.add(item)));
    expect(results).toEqual(["row 1", "row 2", "row 3", "row 4"]);
    expect(mostAtOnce).toBe(1);
  });

  it("fails the whole batch without writing it again when the failure may not be one item's (a lost connection may have committed it)", async () => {
    const lost = new Error("Connection terminated unexpectedly");
    const written: number[][] = [];
    const batcher = new WriteBatcher(
      async (items: number[]) => {
        written.push(items);
        throw lost;
      },
      { maxInFlight: 1, maxBatch: 10, mayBeOneItems: (error) => error !== lost },
    );
    const results = await Promise.allSettled([1, 2, 3].map((item) => batcher.add(item)));
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(written).toEqual([[1, 2, 3]]);
  });
});

describe("WriteBatcher with overlapAfterMs", () => {
  /**
   * A batcher that overlaps after 5 ms, on a fake clock: only the clock it reads and its timer are
   * fake, so settled() still waits on the real setImmediate.
   */
  const overlapping = (maxInFlight: number) => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const { calls, write } = heldWrites();
    return { calls, batcher: new WriteBatcher(write, { maxInFlight, maxBatch: 10, overlapAfterMs: 5, mayBeOneItems: () => true }) };
  };
  afterEach(() => vi.useRealTimers());

  it("starts a batch beside the one in flight only once that one has run overlapAfterMs, with every item that gathered meanwhile", async () => {
    const { calls, batcher } = overlapping(2);
    const first = batcher.add(1);
    await settled();
    const waiting = [batcher.add(2)];
    await settled();
    vi.advanceTimersByTime(4);
    waiting.push(batcher.add(3));
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1]]);
    vi.advanceTimersByTime(1);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2, 3]]);
    calls[1]!.settle("ok");
    calls[0]!.settle("ok");
    expect(await Promise.all([first, ...waiting])).toEqual(["row 1", "row 2", "row 3"]);
  });

  it("starts the waiting items at once when the batch in flight ends first, and a later timer finds nothing to start", async () => {
    const { calls, batcher } = overlapping(2);
    const first = batcher.add(1);
    await settled();
    vi.advanceTimersByTime(2);
    const second = batcher.add(2);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1]]);
    calls[0]!.settle("ok");
    expect(await first).toBe("row 1");
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2]]);
    // The timer set while [1] was in flight fires at 5 ms: [2] has run only 3, so a new item waits for it.
    const third = batcher.add(3);
    vi.advanceTimersByTime(3);
    await settled();
    expect(calls).toHaveLength(2);
    vi.advanceTimersByTime(2);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2], [3]]);
    calls[1]!.settle("ok");
    calls[2]!.settle("ok");
    expect(await Promise.all([second, third])).toEqual(["row 2", "row 3"]);
  });

  it("goes by the batch started last: while it is in flight its age decides; once it has ended, the older batches have all run long enough", async () => {
    const { calls, batcher } = overlapping(3);
    const results = [batcher.add(1)];
    await settled();
    vi.advanceTimersByTime(5);
    results.push(batcher.add(2));
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2]]);
    // The older batch ends at 6 ms; [2] has run 1 ms, so the next item waits until it has run 5.
    vi.advanceTimersByTime(1);
    calls[0]!.settle("ok");
    await settled();
    results.push(batcher.add(3));
    vi.advanceTimersByTime(3);
    await settled();
    expect(calls).toHaveLength(2);
    vi.advanceTimersByTime(1);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2], [3]]);
    // The newest ([3], 0 ms old) ends first: [2], still in flight, has run 5 ms, so the next starts at once.
    calls[2]!.settle("ok");
    await settled();
    results.push(batcher.add(4));
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2], [3], [4]]);
    calls[1]!.settle("ok");
    calls[3]!.settle("ok");
    expect(await Promise.all(results)).toEqual(["row 1", "row 2", "row 3", "row 4"]);
  });

  it("never has more than maxInFlight batches in flight, however long they run", async () => {
    const { calls, batcher } = overlapping(2);
    const results = [batcher.add(1)];
    await settled();
    vi.advanceTimersByTime(5);
    results.push(batcher.add(2));
    await settled();
    vi.advanceTimersByTime(5);
    results.push(batcher.add(3));
    await settled();
    vi.advanceTimersByTime(50);
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2]]);
    // The younger batch ends: the older one has run overlapAfterMs, so the waiting item starts beside it.
    calls[1]!.settle("ok");
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2], [3]]);
    calls[0]!.settle("ok");
    calls[2]!.settle("ok");
    expect(await Promise.all(results)).toEqual(["row 1", "row 2", "row 3"]);
  });
});

describe("WriteBatcher and its callers' async context (a trace's spans)", () => {
  it("writes a batch within the context of a caller in it, not of a caller from an earlier batch", async () => {
    const caller = new AsyncLocalStorage<string>();
    const { calls, write } = heldWrites();
    const contexts: (string | undefined)[] = [];
    const batcher = new WriteBatcher(
      (items: number[]) => {
        contexts.push(caller.getStore());
        return write(items);
      },
      { maxInFlight: 1, maxBatch: 10, mayBeOneItems: () => true },
    );
    const first = caller.run("request 1", () => batcher.add(1));
    await settled();
    const later = [2, 3].map((item) => caller.run(`request ${item}`, () => batcher.add(item)));
    await settled();
    calls[0]!.settle("ok");
    await first;
    await settled();
    expect(calls.map(({ items }) => items)).toEqual([[1], [2, 3]]);
    calls[1]!.settle("ok");
    await Promise.all(later);
    // The second statement is requests 2 and 3's: its span must not join request 1's trace (which has ended).
    expect(contexts).toEqual(["request 1", "request 2"]);
  });

  it("writes an item again alone within its own caller's context", async () => {
    const caller = new AsyncLocalStorage<string>();
    const contexts: [number[], string | undefined][] = [];
    const batcher = new WriteBatcher(
      async (items: number[]) => {
        contexts.push([items, caller.getStore()]);
        if (items.length > 1) throw new Error("one row refused");
        return items.map((item) => `row ${item}`);
      },
      { maxInFlight: 1, maxBatch: 10, mayBeOneItems: () => true },
    );
    await Promise.all([1, 2].map((item) => caller.run(`request ${item}`, () => batcher.add(item))));
    expect(contexts).toEqual([
      [[1, 2], "request 1"],
      [[1], "request 1"],
      [[2], "request 2"],
    ]);
  });
});
