import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TransformNodeSchema, ValidateNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runTransform } from "../../src/runs/nodes/transform/transform.ts";
import { compileSchema, runValidate } from "../../src/runs/nodes/validate/validate.ts";
import { conditionHolds } from "../../src/runs/sandbox/expressions.ts";
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

  it("keeps JSONata's sequence limit in a thread, for a route condition as for a node", async () => {
    const text = "($f := function($n, $acc) { $n = 0 ? $acc : $f($n - 1, $acc + $n) }; $f(6000, 0); $count([1..150000]) > 0)";
    expect((await stepErrorOf(() => conditionHolds(text, "routes[0].when", {}))).message).toMatch(/^expression_failed: routes\[0\]\.when.*sequence/i);
    const error = await stepErrorOf(() => runTransform(create(TransformNodeSchema, { expression: text }), RUN_DATA, nodeContext()));
    expect(error.code).toBe("expression_failed");
    expect(error.message).toMatch(/sequence/i);
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
