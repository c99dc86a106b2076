/**
 * The sandbox's budgets for what pipe authors write, run out on purpose: expressions that recurse,
 * backtrack or build for seconds, each ended at its time or heap limit, and an organization's fair
 * share of the sandbox's threads. Each test spends about a second of a core, so the file runs in the
 * e2e tier (vitest.config.ts); test/sandbox/expressions.test.ts holds what expressions answer.
 */
import { describe, expect, it } from "vitest";
import type { StepError } from "../../src/runs/step-error.ts";
import { conditionHolds, evaluateExpression } from "../../src/runs/sandbox/expressions.ts";
import { stepErrorOf } from "../nodes/support.ts";

const failureOf = (text: string, data: unknown = {}) => stepErrorOf(() => evaluateExpression(text, "when", data));

/** Settles `work` and says whether a timer set as it started fired before it settled: whether the event loop stayed free. */
async function timerFiredFirst(work: Promise<unknown>): Promise<{ outcome: PromiseSettledResult<unknown>; timerFirst: boolean }> {
  let fired = false;
  const timer = setTimeout(() => (fired = true), 10);
  const [outcome] = await Promise.allSettled([work]);
  clearTimeout(timer);
  return { outcome: outcome!, timerFirst: fired };
}

describe("the sandbox's budgets for JSONata expressions", () => {
  it("an expression that recurses for ever stops at the time limit, naming it", async () => {
    const error = await failureOf("($f := function($n){ $f($n + 1) }; $f(1))");
    expect(error.message).toBe("expression_failed: when: the expression took longer than 1000 ms, the time limit of an expression");
    expect(error.details).toMatchObject({ limit: "time" });
  });

  it("a regular expression that backtracks catastrophically stops at the time limit, and the next one runs", async () => {
    const error = await failureOf("$contains(text, /^(a+)+$/)", { text: `${"a".repeat(40)}!` });
    expect(error.details).toMatchObject({ limit: "time" });
    expect(await conditionHolds("$contains(text, /^a+!$/)", "when", { text: `${"a".repeat(40)}!` })).toBe(true);
  });

  it("$toMillis with a picture that backtracks stops at the time limit; one that does not gives its value", async () => {
    // JSONata makes the picture a regular expression of its own, one group per component: minutes in the process.
    const error = await failureOf(`$toMillis(stamp, "[f][f][f][f][f][f][f][f]")`, { stamp: `${"1".repeat(60)}x` });
    expect(error.details).toMatchObject({ limit: "time" });
    expect(await evaluateExpression(`$toMillis("27/11/2026", "[D01]/[M01]/[Y0001]")`, "when", {})).toBe(Date.UTC(2026, 10, 27));
    expect(await evaluateExpression(`$toMillis("2026-11-27T10:00:00Z")`, "when", {})).toBe(Date.UTC(2026, 10, 27, 10));
    expect(await evaluateExpression(`$toMillis(missing, "[Y0001]")`, "when", {})).toBeUndefined();
    expect((await failureOf(`$toMillis("27.11.2026")`)).message).toMatch(/must be an ISO 8601 formatted timestamp/);
  });

  it("a built-in that builds for seconds runs off the event loop and is ended at the time limit: a timer set meanwhile fires first", async () => {
    // In the process, JSONata checks its timeout between its steps only: this one step took 7.3 s for 30,000,000 characters.
    const hog = evaluateExpression('$length($pad("", 15000000, "x"))', "transform.expression", {});
    const { outcome, timerFirst } = await timerFiredFirst(hog);
    // $length copies the string into an array of characters: which limit it reaches first depends on the machine's speed.
    expect(outcome).toMatchObject({ status: "rejected", reason: { code: "expression_failed", details: { limit: expect.stringMatching(/^(time|memory)$/) } } });
    expect(timerFirst).toBe(true);
  });

  it("while two $pad hogs hold the sandbox's threads, another organization's route condition is answered before they end", async () => {
    const settled: string[] = [];
    const hogs = [1, 2].map((n) =>
      evaluateExpression('$length($pad("", 15000000, "x"))', `hog ${n}`, {}).catch((error: StepError) => settled.push(`hog ${n}: ${error.code}`)),
    );
    const condition = conditionHolds("file.format = 'pdf' and read.pageCount > 1", "routes[0].when", { file: { format: "pdf" }, read: { pageCount: 2 } });
    settled.push(`condition: ${await condition}`);
    await Promise.all(hogs);
    // The condition first; the two hogs end at their budget in either order.
    expect(settled[0]).toBe("condition: true");
    expect(settled.slice(1).sort()).toEqual(["hog 1: expression_failed", "hog 2: expression_failed"]);
  });

  it("an organization runs one expression at a time in the sandbox, and rests as long as one that ran out its time held its thread", async () => {
    const hogger = { organizationId: "org-hogger" };
    const started = performance.now();
    const settledAt = new Map<string, number>();
    const timed = (name: string, work: Promise<unknown>) =>
      work.then(
        () => settledAt.set(name, performance.now() - started),
        () => settledAt.set(name, performance.now() - started),
      );
    // Not bounded (built with $pad): each runs in a thread.
    const hog = timed("hog", evaluateExpression('$length($pad("", 15000000, "x"))', "hog", {}, hogger));
    const hoggersNext = timed("hogger's next", evaluateExpression('$pad("x", 3)', "next", {}, hogger));
    const others = timed("another organization's", evaluateExpression('$pad("x", 3)', "other", {}, { organizationId: "org-other" }));
    await Promise.all([hog, hoggersNext, others]);
    const at = (name: string) => settledAt.get(name)!;
    // The other organization takes the second thread at once; the hogger's next waits for its hog,
    // then for as long again. The hog held its thread from the start until its time limit (1 s) or,
    // on a fast machine, its memory limit (about 0.85 s here): the rest is measured, not assumed.
    expect(at("another organization's")).toBeLessThan(at("hog"));
    expect(at("hog")).toBeGreaterThanOrEqual(200);
    // Less than all of it by how late this test saw the hog end, twice over on a busy machine; without
    // a rest the gap is a few ms.
    expect(at("hogger's next") - at("hog")).toBeGreaterThanOrEqual(0.5 * at("hog"));
  });

  // A function of its own: not bounded, so it runs in a thread, where JSONata's timeout ends it after 1 s;
  // inside $eval, which wraps that timeout in an error of its own (D3121), the same.
  it.each([
    ["a recursion", "($f := function($n){ $f($n + 1) }; $f(1))"],
    ["a recursion inside $eval", '$eval("($f := function($n){ $f($n + 1) }; $f(1))")'],
  ])("%s that stops itself at its time limit (JSONata's own timeout, in the thread) makes its organization rest too", async (_, expression) => {
    const hogger = { organizationId: `org-recursing-${expression.length}` };
    const started = performance.now();
    const hog = evaluateExpression(expression, "hog", {}, hogger).then(
      () => undefined,
      (error: StepError) => error,
    );
    const next = evaluateExpression('$pad("x", 3)', "next", {}, hogger);
    expect(await hog).toMatchObject({ code: "expression_failed", details: { limit: "time" } });
    const hogEnded = performance.now() - started;
    expect(await next).toBe("x  ");
    expect(performance.now() - started - hogEnded).toBeGreaterThanOrEqual(0.5 * hogEnded);
  });

  it("the budget belongs to each evaluation: a cached expression evaluated again starts afresh", async () => {
    await failureOf("($f := function($n){ $f($n + 1) }; $f(1))");
    expect(await evaluateExpression("$count([1,2,3])", "when", {})).toBe(3);
  });
});
