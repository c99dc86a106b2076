import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import type { StepError } from "../../src/runs/step-error.ts";
import { compileExpression, conditionHolds, evaluateExpression, isTrue } from "../../src/runs/sandbox/expressions.ts";
import { stepErrorOf } from "../nodes/support.ts";

const failureOf = (text: string, data: unknown = {}) => stepErrorOf(() => evaluateExpression(text, "when", data));

describe("JSONata expressions over run data", () => {
  it("a condition reads the run data", async () => {
    const data = { file: { format: "pdf" }, read: { text: "Invoice no. 7", pageCount: 2 } };
    expect(await conditionHolds("read.text ~> $contains('Invoice')", "when", data)).toBe(true);
    expect(await conditionHolds("file.format = 'png'", "when", data)).toBe(false);
    expect(await conditionHolds("read.pageCount > 1", "when", data)).toBe(true);
  });

  it("a value counts as true by JSONata's $boolean rules", () => {
    expect([undefined, null, "", 0, false, [], {}, [0, ""]].map(isTrue)).toEqual([false, false, false, false, false, false, false, false]);
    expect(["a", 1, true, [0, 1], { a: 1 }].map(isTrue)).toEqual([true, true, true, true, true]);
  });

  it("an error at run time is expression_failed with JSONata's message and position, in the process and in a thread alike", async () => {
    for (const text of ["$undefinedFunction(1)", '{"a": $undefinedFunction(1)}']) {
      const error = await failureOf(text);
      expect(error.code).toBe("expression_failed");
      expect(error.message).toMatch(/^expression_failed: when at position \d+: .*invoke a non-function/);
      expect(error.details.position).toBeGreaterThan(0);
    }
  });

  it("a syntax error is expression_invalid with its position and JSONata's message", () => {
    let error: StepError | undefined;
    try {
      compileExpression("a +", "when");
    } catch (thrown) {
      error = thrown as StepError;
    }
    expect(error).toMatchObject({ code: "expression_invalid", details: { position: 3, jsonataMessage: "Unexpected end of expression" } });
  });

  it.runIf(process.platform === "linux")(
    "a sandbox thread runs below the process's own CPU priority, so a hog takes a core only when nothing else wants it",
    async () => {
      // Not bounded (it builds with $pad): it runs in a sandbox thread.
      expect(await evaluateExpression('$length($pad("", 10, "x"))', "transform.expression", {})).toBe(10);
      const niceOf = async (task: string) => {
        const stat = await readFile(`/proc/self/task/${task}/stat`, "utf8");
        // The nice value is the 19th field; the 2nd (the thread's name, in parentheses) may hold spaces.
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      };
      const main = await niceOf(String(process.pid));
      const nices = await Promise.all((await readdir("/proc/self/task")).map(niceOf));
      expect(nices.filter((nice) => nice >= Math.min(19, main + 10)).length).toBeGreaterThanOrEqual(1);
    },
  );

  it("a string past the size limit of a value fails naming it before it is built, and the process does not grow by gigabytes", async () => {
    const before = process.memoryUsage().rss;
    const limit = "expression_failed: when: the expression built a string of more than 16 Mi characters, the size limit of a value";
    // In the process this grew it from 353 MB to 1.74 GB, and kept it.
    for (const hog of ['$pad("x", 400000000)', '($s := $pad("", 1048576, "x"); $join([1..17].($s)))']) {
      const error = await failureOf(hog);
      expect(error.message).toBe(limit);
      expect(error.details).toMatchObject({ limit: "value" });
    }
    // `&` doubles a string until it passes the limit; flattened in one allocation it would end the process.
    const doubling = await failureOf('($double := function($s, $n) { $n = 0 ? $s : $double($s & $s, $n - 1) }; $uppercase($double($pad("", 1024, "x"), 18)))');
    expect(doubling.message).toBe(limit);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    expect(await evaluateExpression('{"n": $count([1,2,3])}', "when", {})).toEqual({ n: 3 });
  });

  it("a result past its size limit fails naming it", async () => {
    const error = await failureOf('($double := function($s, $n) { $n = 0 ? $s : $double($s & $s, $n - 1) }; [1..20].$double("x", 20))');
    expect(error.message).toBe("expression_failed: when: the expression's result holds more than 16 Mi characters, the size limit of an expression's result");
    expect(error.details).toMatchObject({ limit: "result" });
  });

  it("gives the same value whether it ran in the process or in a thread", async () => {
    const slowly = (tail: string) => `($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0); ${tail})`;
    for (const tail of ["1/0", '{"f": function($x) { $x }}', "-0", "[]", '""', "file.format = 'pdf'"]) {
      const data = { file: { format: "pdf" } };
      expect(await conditionHolds(slowly(tail), "when", data)).toBe(await conditionHolds(tail, "when", data));
    }
    expect(await evaluateExpression("($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0))", "when", {})).toBe(18003000);
  });
});
