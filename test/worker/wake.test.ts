import { afterEach, describe, expect, it, vi } from "vitest";
import { Wake } from "../../src/platform/wake.ts";

/** Starts `count` slots waiting on `wake`; each records its index when it wakes. */
function waitingSlots(wake: Wake, count: number): number[] {
  const woken: number[] = [];
  for (let i = 0; i < count; i++) void wake.wait(60_000, wake.generation).then(() => woken.push(i));
  return woken;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe("Wake: idle slots are woken one at a time, each claim costing a statement", () => {
  it("a notification wakes one idle slot, the one waiting longest", async () => {
    const wake = new Wake();
    const woken = waitingSlots(wake, 3);
    wake.notify();
    await settle();
    expect(woken).toEqual([0]);
  });

  it("a slot that found work passes the wake-up on to the next idle slot", async () => {
    const wake = new Wake();
    const woken = waitingSlots(wake, 3);
    wake.notify();
    await settle();
    wake.notify();
    await settle();
    expect(woken).toEqual([0, 1]);
  });

  it("a notification between a slot's claim and its wait is not missed (new work, or another slot's claim that found some)", async () => {
    const wake = new Wake();
    const seen = wake.generation;
    wake.notify(); // no one waits yet: the slot is claiming
    const started = performance.now();
    await wake.wait(60_000, seen);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("a notification an idle slot took does not also make a busy slot look when it is done", async () => {
    const wake = new Wake();
    const woken = waitingSlots(wake, 1);
    const seenByBusySlot = wake.generation; // a slot claiming, then working
    wake.notify();
    await settle();
    expect(woken).toEqual([0]);
    const waited = await Promise.race([
      wake.wait(20, seenByBusySlot).then(() => "timer"),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5)),
    ]);
    expect(waited).toBe("still waiting");
  });

  it("idle slots poll one at a time: four idle slots look once per poll period, not four times", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const wake = new Wake();
    let polls = 0;
    const slot = async () => {
      for (;;) {
        await wake.wait(1000, wake.generation);
        polls++; // a claim that found nothing
      }
    };
    for (let i = 0; i < 4; i++) void slot();
    await vi.advanceTimersByTimeAsync(10_500);
    expect(polls).toBe(10);
  });

  it("notifyAll wakes every idle slot (stopping)", async () => {
    const wake = new Wake();
    const woken = waitingSlots(wake, 3);
    wake.notifyAll();
    await settle();
    expect(woken.sort()).toEqual([0, 1, 2]);
  });
});
