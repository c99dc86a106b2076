import { describe, expect, it } from "vitest";
import { conditionHolds, ExpressionError, evaluateExpression, isTrue } from "../../src/pipes/expressions.ts";
import { longestStall } from "../support/event-loop.ts";

async function failureOf(text: string, data: unknown = {}): Promise<ExpressionError> {
  try {
    await evaluateExpression(text, data);
  } catch (error) {
    if (error instanceof ExpressionError) return error;
    throw error;
  }
  throw new Error("expected an ExpressionError");
}

describe("JSONata expressions over run data", () => {
  it("a condition reads the run data", async () => {
    const data = { file: { format: "pdf" }, read: { text: "Invoice no. 7", pageCount: 2 } };
    expect(await conditionHolds("read.text ~> $contains('Invoice')", data)).toBe(true);
    expect(await conditionHolds("file.format = 'png'", data)).toBe(false);
    expect(await conditionHolds("read.pageCount > 1", data)).toBe(true);
  });

  it("a value counts as true by JSONata's $boolean rules", () => {
    expect([undefined, null, "", 0, false, [], {}, [0, ""]].map(isTrue)).toEqual([false, false, false, false, false, false, false, false]);
    expect(["a", 1, true, [0, 1], { a: 1 }].map(isTrue)).toEqual([true, true, true, true, true]);
  });

  it("an error at run time carries JSONata's message and position", async () => {
    const error = await failureOf("$undefinedFunction(1)");
    expect(error.message).toMatch(/invoke a non-function/);
    expect(error.position).toBeGreaterThan(0);
  });

  it("a syntax error carries its position", async () => {
    const error = await failureOf("a +");
    expect(error).toMatchObject({ message: "Unexpected end of expression", position: 3 });
  });

  it("an expression that recurses for ever stops at its time budget instead of hanging the worker", async () => {
    const error = await failureOf("($f := function($n){ $f($n + 1) }; $f(1))");
    expect(error.message).toBe("the expression took longer than 1000 ms");
  });

  it("a regular expression that backtracks catastrophically stops at its own budget instead of hanging the worker", async () => {
    const error = await failureOf("$contains(text, /^(a+)+$/)", { text: `${"a".repeat(40)}!` });
    expect(error.message).toMatch(/^the regular expression \/\^\(a\+\)\+\$\/ took longer than 250 ms/);
    expect(await conditionHolds("$contains(text, /^a+!$/)", { text: `${"a".repeat(40)}!` })).toBe(true);
  });

  it("$toMillis with a picture matches in a thread within the same budget: a picture that backtracks fails, the event loop held 250 ms at most", async () => {
    // JSONata makes the picture a regular expression of its own, one group per component.
    const hostile = `$toMillis(stamp, "[f][f][f][f][f][f][f][f]")`;
    const { outcome, stallMs } = await longestStall(() => evaluateExpression(hostile, { stamp: `${"1".repeat(60)}x` }));
    expect(outcome).toMatchObject({ status: "rejected", reason: { message: "$toMillis with the picture took longer than 250 ms" } });
    // In the process it backtracked for minutes.
    expect(stallMs).toBeLessThan(1000);
    expect(await evaluateExpression(`$toMillis("27/11/2026", "[D01]/[M01]/[Y0001]")`, {})).toBe(Date.UTC(2026, 10, 27));
    expect(await evaluateExpression(`$toMillis("2026-11-27T10:00:00Z")`, {})).toBe(Date.UTC(2026, 10, 27, 10));
    expect(await evaluateExpression(`$toMillis(missing, "[Y0001]")`, {})).toBeUndefined();
    expect((await failureOf(`$toMillis("27.11.2026")`)).message).toMatch(/must be an ISO 8601 formatted timestamp/);
    // JSONata's message names what it refused, as in the process.
    expect((await failureOf(`$toMillis("2026", "[Y0001]-[Q]")`)).message).toMatch(/^Unknown component specifier "?Q"? /);
  });

  it("a condition that runs longer than a moment goes on in a matching thread: its value is the same, the event loop stays free", async () => {
    expect(await evaluateExpression("($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0))", {})).toBe(18003000);
    expect(await conditionHolds("($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0)) > limit", { limit: 1 })).toBe(true);
    const { outcome, stallMs } = await longestStall(() => evaluateExpression("($f := function($n){ $f($n + 1) }; $f(1))", {}));
    expect(outcome).toMatchObject({ status: "rejected", reason: { message: "the expression took longer than 1000 ms" } });
    expect(stallMs).toBeLessThan(500);
  });

  it("a condition's value is the same whether it ran in the process or, past a moment, in a matching thread", async () => {
    const slowly = (tail: string) => `($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0); ${tail})`;
    for (const tail of ["1/0", '{"f": function($x) { $x }}', "-0", "[]", '""']) {
      expect(await conditionHolds(slowly(tail), {})).toBe(await conditionHolds(tail, {}));
    }
  });

  it("the budget belongs to each evaluation: a cached expression evaluated again starts afresh", async () => {
    await failureOf("($f := function($n){ $f($n + 1) }; $f(1))");
    expect(await evaluateExpression("$count([1,2,3])", {})).toBe(3);
  });
});
