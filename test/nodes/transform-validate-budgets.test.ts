/**
 * Transform and validate nodes at their budgets, run out on purpose: an expression that backtracks
 * or recurses for ever, a schema whose pattern backtracks or whose uniqueItems compares every pair.
 * Each test spends about a second of a core, so the file runs in the e2e tier (vitest.config.ts);
 * test/nodes/transform-validate.test.ts holds what the nodes answer.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TransformNodeSchema, ValidateNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runTransform } from "../../src/runs/nodes/transform/transform.ts";
import { runValidate } from "../../src/runs/nodes/validate/validate.ts";
import type { StepError } from "../../src/runs/step-error.ts";
import { longestStall } from "../support/event-loop.ts";
import { nodeContext, stepErrorOf } from "./support.ts";

describe("transform at its budget", () => {
  it("stops a regular expression that backtracks catastrophically at the expression's time limit (JSONata's own timeout never looks inside one)", async () => {
    const node = create(TransformNodeSchema, { expression: "$contains(text, /^(a+)+$/)" });
    const error = await stepErrorOf(() => runTransform(node, { text: `${"a".repeat(40)}!` }, nodeContext()));
    expect(error.message).toBe("expression_failed: transform.expression: the expression took longer than 1000 ms, the time limit of an expression");
    // The thread that ran it was ended; the next expression's regex runs in a new one.
    expect(await runTransform(create(TransformNodeSchema, { expression: '$contains("Total 42", /\\d+/)' }), {}, nodeContext())).toBe(true);
  });

  it("an expression that runs longer than a moment goes on in a matching thread: its value is the same, the event loop stays free", async () => {
    // A defined function runs in a thread from the start. 1,500 calls take about 30 ms on a quiet
    // core: longer than a moment, yet far inside the 1 s budget on a loaded CI host (6,000 calls
    // once took it past the budget in a new thread there).
    const sum = create(TransformNodeSchema, { expression: "($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(1500, 0))" });
    expect(await runTransform(sum, {}, nodeContext())).toBe(1125750);
    // Endless: a second of JSONata's budget, which held the event loop for all of it when it ran in the process.
    const endless = create(TransformNodeSchema, { expression: "($f := function($n) { $f($n + 1) }; $f(0))" });
    const { outcome, stallMs } = await longestStall(() => runTransform(endless, {}, nodeContext()));
    expect(outcome.status).toBe("rejected");
    const error = (outcome as PromiseRejectedResult).reason as StepError;
    expect(error.code).toBe("expression_failed");
    expect(error.details).toMatchObject({ limit: "time" });
    expect(stallMs).toBeLessThan(500);
  });

  it("stops endless recursion within its budget", async () => {
    const error = await stepErrorOf(() =>
      runTransform(create(TransformNodeSchema, { expression: "($f := function($n) { $f($n + 1) }; $f(0))" }), {}, nodeContext()),
    );
    expect(error.code).toBe("expression_failed");
    expect(error.details).toMatchObject({ limit: "time" });
  });
});

describe("validate at its budget", () => {
  it("stops a schema whose pattern backtracks catastrophically with validation_timeout, the event loop free meanwhile", async () => {
    const node = create(ValidateNodeSchema, { select: "text", schema: JSON.stringify({ type: "string", pattern: "^(a+)+$" }) });
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 5);
    try {
      const error = await stepErrorOf(() => runValidate(node, { text: `${"a".repeat(40)}!` }, nodeContext()));
      expect(error.code).toBe("validation_timeout");
      expect(error.message).toMatch(/^validation_timeout: validate\.schema: validating took longer than 1000 ms; simplify the schema/);
      expect(error.details).toEqual({ field: "validate.schema" });
    } finally {
      clearInterval(ticking);
    }
    // In-process the event loop would have been held throughout (over a minute for this pattern).
    expect(ticks).toBeGreaterThan(10);
    // The next validation gets a new thread.
    expect(
      await runValidate(
        create(ValidateNodeSchema, { select: "text", schema: JSON.stringify({ type: "string", pattern: "^a+$" }) }),
        { text: "aaa" },
        nodeContext(),
      ),
    ).toEqual({
      valid: true,
      errors: [],
    });
  });

  it("stops uniqueItems over a huge array of objects with validation_timeout (it compares every pair)", async () => {
    const node = create(ValidateNodeSchema, { select: "items", schema: JSON.stringify({ type: "array", uniqueItems: true }) });
    const items = Array.from({ length: 60_000 }, (_, n) => ({ n, tags: ["x", "y"] }));
    const error = await stepErrorOf(() => runValidate(node, { items }, nodeContext()));
    expect(error.code).toBe("validation_timeout");
  });
});
