import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TransformNodeSchema, ValidateNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runTransform } from "../../src/nodes/transform/transform.ts";
import { compileSchema, runValidate } from "../../src/nodes/validate/validate.ts";
import type { StepError } from "../../src/nodes/step-error.ts";
import { conditionHolds } from "../../src/sandbox/expressions.ts";
import { longestStall } from "../support/event-loop.ts";
import { nodeContext, stepErrorOf } from "./support.ts";

const RUN_DATA = {
  extract: {
    fields: { number: "INV-1", total: { amount: 1334.56, currency: "EUR" }, items: [{ qty: 2 }, { qty: 1 }] },
    missing: [],
  },
};

const SCHEMA = JSON.stringify({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["number", "total", "due"],
  properties: {
    number: { type: "string", pattern: "^INV-\\d+$" },
    total: { type: "object", properties: { amount: { type: "number", exclusiveMinimum: 0 }, currency: { enum: ["EUR", "USD"] } } },
    items: { type: "array", items: { type: "object", properties: { qty: { type: "integer", maximum: 1 } } } },
  },
});

const SCHEMA_OF_TEXT = JSON.stringify({ type: "string", pattern: "^a+$" });

describe("transform", () => {
  it("gives the value of its JSONata expression over the run data", async () => {
    const node = create(TransformNodeSchema, {
      expression: '{"ref": extract.fields.number, "cents": extract.fields.total.amount * 100, "qty": $sum(extract.fields.items.qty)}',
    });
    expect(await runTransform(node, RUN_DATA, nodeContext())).toEqual({ ref: "INV-1", cents: 133456, qty: 3 });
  });

  it("gives null when the expression yields nothing", async () => {
    expect(await runTransform(create(TransformNodeSchema, { expression: "nothing.here" }), RUN_DATA, nodeContext())).toBeNull();
  });

  it("reports a syntax error as expression_invalid with its position and token", async () => {
    const error = await stepErrorOf(() => runTransform(create(TransformNodeSchema, { expression: "extract.fields.(number" }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("expression_invalid");
    expect(error.details).toMatchObject({ field: "transform.expression", position: 22, jsonataCode: "S0203" });
    expect(error.message).toMatch(/^expression_invalid: transform\.expression at position 22: /);
  });

  it("reports an evaluation error as expression_failed with its position", async () => {
    const error = await stepErrorOf(() => runTransform(create(TransformNodeSchema, { expression: "extract.fields.number + 1" }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("expression_failed");
    expect(error.details).toMatchObject({ field: "transform.expression", position: 23, jsonataCode: "T2001" });
  });

  it("runs JSONata's regular expressions: $match, $replace, $split and $contains", async () => {
    const node = create(TransformNodeSchema, {
      expression:
        '{"numbers": $match("Invoice 42, order 7", /(\\d+)/).groups, "dashes": $replace("a-b-c", /-/, "+"), "parts": $split("a1b22c", /\\d+/), "has": $contains("Total", /^to/i)}',
    });
    // As a step stores it (JSONata marks its sequences with a property of their own).
    expect(JSON.parse(JSON.stringify(await runTransform(node, RUN_DATA, nodeContext())))).toEqual({
      numbers: ["42", "7"],
      dashes: "a+b+c",
      parts: ["a", "b", "c"],
      has: true,
    });
    // Every match of each text, a text after another; a replacement limited to the first two.
    const counts = create(TransformNodeSchema, {
      expression: '[$map(["a1b2", "c3d4e5", "f"], function($s){ $count($match($s, /\\d/)) }), $replace("x1x2x3", /x/, "-", 2)]',
    });
    expect(JSON.parse(JSON.stringify(await runTransform(counts, RUN_DATA, nodeContext())))).toEqual([2, 3, 0, "-1-2x3"]);
  });

  it("stops a regular expression that backtracks catastrophically at the expression's time limit (JSONata's own timeout never looks inside one)", async () => {
    const node = create(TransformNodeSchema, { expression: "$contains(text, /^(a+)+$/)" });
    const error = await stepErrorOf(() => runTransform(node, { text: `${"a".repeat(40)}!` }, nodeContext()));
    expect(error.message).toBe("expression_failed: transform.expression: the expression took longer than 1000 ms, the time limit of an expression");
    // The thread that ran it was ended; the next expression's regex runs in a new one.
    expect(await runTransform(create(TransformNodeSchema, { expression: '$contains("Total 42", /\\d+/)' }), RUN_DATA, nodeContext())).toBe(true);
  });

  it("an expression that runs longer than a moment goes on in a matching thread: its value is the same, the event loop stays free", async () => {
    const sum = create(TransformNodeSchema, { expression: "($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0))" });
    expect(await runTransform(sum, RUN_DATA, nodeContext())).toBe(18003000);
    // Endless: a second of JSONata's budget, which held the event loop for all of it when it ran in the process.
    const endless = create(TransformNodeSchema, { expression: "($f := function($n) { $f($n + 1) }; $f(0))" });
    const { outcome, stallMs } = await longestStall(() => runTransform(endless, RUN_DATA, nodeContext()));
    expect(outcome.status).toBe("rejected");
    const error = (outcome as PromiseRejectedResult).reason as StepError;
    expect(error.code).toBe("expression_failed");
    expect(error.details).toMatchObject({ limit: "time" });
    expect(stallMs).toBeLessThan(500);
  });

  it("keeps JSONata's sequence limit in a thread, for a route condition as for a node", async () => {
    const text = "($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0); $count([1..150000]) > 0)";
    expect((await stepErrorOf(() => conditionHolds(text, "routes[0].when", {}))).message).toMatch(/^expression_failed: routes\[0\]\.when.*sequence/i);
    const error = await stepErrorOf(() => runTransform(create(TransformNodeSchema, { expression: text }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("expression_failed");
    expect(error.message).toMatch(/sequence/i);
  });

  it("stops endless recursion within its budget", async () => {
    const error = await stepErrorOf(() =>
      runTransform(create(TransformNodeSchema, { expression: "($f := function($n) { $f($n + 1) }; $f(0))" }), RUN_DATA, nodeContext()),
    );
    expect(error.code).toBe("expression_failed");
    expect(error.details).toMatchObject({ limit: "time" });
  });
});

describe("validate", () => {
  it("checks each schema's pattern by its own pattern", async () => {
    const schema = (pattern: string) => JSON.stringify({ type: "string", pattern });
    const check = (pattern: string) =>
      runValidate(create(ValidateNodeSchema, { select: "text", schema: schema(pattern), continueOnInvalid: true }), { text: "bbb" }, nodeContext());
    expect(await check("^a+$")).toMatchObject({ valid: false, errors: [{ path: "/", message: 'must match pattern "^a+$"' }] });
    expect(await check("^b+$")).toEqual({ valid: true, errors: [] });
  });

  it("reports every error with a JSON Pointer to the value at fault", async () => {
    const node = create(ValidateNodeSchema, { select: "extract.fields", schema: SCHEMA, continueOnInvalid: true });
    expect(await runValidate(node, RUN_DATA, nodeContext())).toEqual({
      valid: false,
      errors: [
        { path: "/due", message: "must have required property 'due'" },
        { path: "/items/0/qty", message: "must be <= 1" },
      ],
    });
  });

  it("passes valid data", async () => {
    const node = create(ValidateNodeSchema, { select: "extract.fields.total", schema: JSON.stringify({ required: ["amount", "currency"] }) });
    expect(await runValidate(node, RUN_DATA, nodeContext())).toEqual({ valid: true, errors: [] });
  });

  it("fails the step with validation_failed unless the node continues on invalid data", async () => {
    const node = create(ValidateNodeSchema, { select: "extract.fields", schema: SCHEMA });
    const error = await stepErrorOf(() => runValidate(node, RUN_DATA, nodeContext()));
    expect(error.code).toBe("validation_failed");
    expect(error.message).toBe("validation_failed: 2 error(s): /due must have required property 'due'; /items/0/qty must be <= 1");
    expect(error.details).toEqual({ errors: [expect.objectContaining({ path: "/due" }), expect.objectContaining({ path: "/items/0/qty" })] });
  });

  it("checks the whole run data when nothing is selected", async () => {
    const node = create(ValidateNodeSchema, { schema: JSON.stringify({ required: ["review"] }), continueOnInvalid: true });
    expect((await runValidate(node, RUN_DATA, nodeContext())).errors).toEqual([{ path: "/review", message: "must have required property 'review'" }]);
  });

  it("reports a schema that is not JSON or not a schema as schema_invalid, naming the schema path", async () => {
    const notJson = await stepErrorOf(() => runValidate(create(ValidateNodeSchema, { schema: "{type:" }), RUN_DATA, nodeContext()));
    expect(notJson.code).toBe("schema_invalid");
    expect(notJson.message).toMatch(/^schema_invalid: validate\.schema: not JSON: /);
    const bad = await stepErrorOf(() =>
      runValidate(create(ValidateNodeSchema, { schema: JSON.stringify({ properties: { a: { type: "strin" } } }) }), RUN_DATA, nodeContext()),
    );
    expect(bad.code).toBe("schema_invalid");
    expect(bad.message).toContain("schema is invalid: data/properties/a/type must be equal to one of the allowed values");
  });

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
    expect(await runValidate(create(ValidateNodeSchema, { select: "text", schema: SCHEMA_OF_TEXT }), { text: "aaa" }, nodeContext())).toEqual({
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

  it("checks a selected JSONata function as the data it comes back from the sandbox as", async () => {
    const node = create(ValidateNodeSchema, { select: "function($x) { $x }", schema: '{"type": "object"}' });
    expect(await runValidate(node, RUN_DATA, nodeContext())).toMatchObject({ valid: true });
  });

  it("reports a schema Ajv cannot compile (an $id that is not a string) as schema_invalid, when saved and when run", async () => {
    const node = create(ValidateNodeSchema, { schema: JSON.stringify({ $id: 5 }) });
    await expect(compileSchema(node.schema, "pipe.nodes[0].validate.schema")).rejects.toThrow(/^schema_invalid: pipe\.nodes\[0\]\.validate\.schema: /);
    const error = await stepErrorOf(() => runValidate(node, RUN_DATA, nodeContext()));
    expect(error.code).toBe("schema_invalid");
    expect(error.details).toEqual({ field: "validate.schema" });
  });

  it("refuses a schema longer than 32 KB as schema_invalid, before compiling it", async () => {
    const types = Array.from({ length: 5000 }, (_, n) => `t${n}`);
    const error = await stepErrorOf(() => runValidate(create(ValidateNodeSchema, { schema: JSON.stringify({ type: types }) }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("schema_invalid");
    expect(error.message).toMatch(/^schema_invalid: validate\.schema: a schema is at most 32768 characters; this one has \d+$/);
  });

  it("reports a bad select expression with its position", async () => {
    const error = await stepErrorOf(() => runValidate(create(ValidateNodeSchema, { select: "extract[", schema: "{}" }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("expression_invalid");
    expect(error.details).toMatchObject({ field: "validate.select", position: 8 });
  });
});
