import { describe, expect, it } from "vitest";
import { compilePattern, findMatches, testPattern } from "../../src/runs/sandbox/patterns.ts";
import { patternBudget } from "../../src/runs/sandbox/pool.ts";

const HOSTILE = compilePattern("^(a+)+$", "hostile");
const HOSTILE_TEXT = `${"a".repeat(40)}!`;

describe("pipe authors' patterns", () => {
  it("share one budget per step: a match gets at most what the step has left", async () => {
    const budget = patternBudget();
    budget.leftMs = 50;
    await expect(testPattern(HOSTILE, HOSTILE_TEXT, "rule.pattern", budget)).rejects.toThrow(
      /^pattern_timeout: rule\.pattern: the step's patterns took longer than 1000 ms in all/,
    );
    expect(budget.leftMs).toBeLessThan(1);
    // Spent: the step's next pattern is refused without running, however cheap.
    await expect(testPattern(compilePattern("a", "next"), "a", "next", budget)).rejects.toThrow(/^pattern_timeout: next: the step's patterns took longer/);
    // Another step's budget is its own.
    expect(await findMatches(compilePattern("(\\d+)", "n"), "a1 b22", "n", patternBudget())).toMatchObject([{ groups: ["1", "1"] }, { groups: ["22", "22"] }]);
  });

  it("a step is charged the thread's matching time, not the time the answer waited for a busy event loop", async () => {
    const budget = patternBudget();
    await testPattern(compilePattern("a", "warm-up"), "a", "warm-up", patternBudget()); // a thread is online
    // Unbounded (b+), so it goes to a thread.
    const matching = testPattern(compilePattern("b+", "rule.pattern"), "abc", "rule.pattern", budget);
    for (let turn = 0; turn < 5; turn++) await null; // the match is sent (microtasks only: no I/O, no answer yet)
    // The event loop is busy (another run's work) while the thread answers.
    const until = performance.now() + 300;
    while (performance.now() < until);
    expect(await matching).toBe(true);
    expect(budget.leftMs).toBeGreaterThan(900);
  });

  it("a stopped run's matches leave the queue at once; those running end within their budget", async () => {
    const settled: string[] = [];
    // Both threads backtrack; a third match waits for one.
    const running = [1, 2].map((n) =>
      testPattern(HOSTILE, HOSTILE_TEXT, `running ${n}`, patternBudget()).catch((error: Error) => settled.push(error.message.split(":")[0]!)),
    );
    const stop = new AbortController();
    const waiting = testPattern(compilePattern("a+", "waiting"), "a", "waiting", patternBudget({ organizationId: "org-waiting", signal: stop.signal }));
    stop.abort(new Error("the run was cancelled"));
    await expect(waiting).rejects.toThrow("the run was cancelled");
    expect(settled).toEqual([]);
    await Promise.all(running);
    expect(settled).toEqual(["pattern_timeout", "pattern_timeout"]);
    // An already stopped run's match is refused before it queues.
    await expect(testPattern(compilePattern("a", "late"), "a", "late", patternBudget({ organizationId: "org-waiting", signal: stop.signal }))).rejects.toThrow(
      "the run was cancelled",
    );
  });

  it("a pattern bounded over its text matches in the process, with the same results, while both threads are held", async () => {
    const settled: string[] = [];
    const held = [1, 2].map((n) => testPattern(HOSTILE, HOSTILE_TEXT, `held ${n}`, patternBudget()).catch(() => settled.push(`held ${n}`)));
    const invoice = compilePattern("invoice (number|no\\.?)|(total)", "rule.pattern");
    const text = "Invoice No. 7, total 12";
    const budget = patternBudget();
    expect(await testPattern(invoice, text, "rule.pattern", budget)).toBe(true);
    const expected = [
      { index: 0, groups: ["Invoice No.", "No.", undefined] },
      { index: 15, groups: ["total", undefined, "total"] },
    ];
    expect(await findMatches(invoice, text, "rule.pattern", budget)).toEqual(expected);
    expect(settled).toEqual([]);
    // The same pattern over a text too long for its bound waits for a thread, and finds the same.
    const long = `${text}${" ".repeat(20_000)}`;
    const queued = findMatches(invoice, long, "rule.pattern", patternBudget()).then((matches) => {
      settled.push("queued");
      return matches;
    });
    expect(await queued).toEqual(expected);
    // It ran once a held thread was ended for its budget.
    expect(settled.indexOf("queued")).toBeGreaterThan(0);
    await Promise.all(held);
  });

  it("every match found is charged too, and at most 1,000 are returned, in the process or from a thread", async () => {
    const budget = patternBudget();
    const text = "ab".repeat(1_000);
    const everywhere = compilePattern("\\B", "rule.pattern");
    // A test costs 2 steps a position (2,001 positions) in the process.
    expect(await testPattern(everywhere, text, "rule.pattern", budget)).toBe(true);
    expect(budget.inProcessSteps).toBe(2_500_000 - 2_001 * 2);
    // It matches at 1,999 positions: the first 1,000 are returned, each charged 200 steps.
    const matches = await findMatches(everywhere, text, "rule.pattern", budget);
    expect(matches).toHaveLength(1_000);
    expect(matches.at(-1)).toEqual({ index: 1_000, groups: [""] });
    expect(budget.inProcessSteps).toBe(2_500_000 - 2 * 2_001 * 2 - 1_000 * 200);
    expect(budget.leftMs).toBe(1000);
    // With a capture group each match costs 400: past the 250,000 a match may, so a thread finds them.
    expect(await findMatches(compilePattern("(\\B)", "rule.pattern"), text, "rule.pattern", budget)).toEqual(
      matches.map(({ index }) => ({ index, groups: ["", ""] })),
    );
    expect(budget.inProcessSteps).toBe(2_500_000 - 2 * 2_001 * 2 - 1_000 * 200);
    expect(budget.leftMs).toBeLessThan(1000);
  });

  it("stops taking matches once their groups hold a million characters: a group may hold the rest of the page at every position", async () => {
    const text = "x".repeat(10_000);
    const matches = await findMatches(compilePattern("(?=([^]*))", "rule.pattern"), text, "rule.pattern", patternBudget());
    // 10,000 + 9,999 + ... reaches 1,000,000 at the 101st match.
    expect(matches).toHaveLength(101);
    expect(matches.at(-1)).toEqual({ index: 100, groups: ["", "x".repeat(9_900)] });
  });

  it("a step's in-process matches are bounded in all: past its allowance they go to a thread", async () => {
    const budget = patternBudget();
    const text = "x".repeat(4_000);
    const bounded = compilePattern("x{1,20}y", "rule.pattern");
    // 4,001 x 61 steps at most per match: 2,500,000 allows ten in the process.
    for (let n = 0; n < 10; n++) expect(await testPattern(bounded, text, "rule.pattern", budget)).toBe(false);
    expect(budget.inProcessSteps).toBeLessThan(4_001 * 61);
    expect(budget.leftMs).toBe(1000);
    expect(await testPattern(bounded, text, "rule.pattern", budget)).toBe(false);
    // The eleventh was the thread's, which charged the step its matching time.
    expect(budget.leftMs).toBeLessThan(1000);
  });
});
