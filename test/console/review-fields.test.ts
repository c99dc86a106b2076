import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { editKey, extractNodesOf, reviewFields, valueText, withEdits } from "../../console/src/review-fields.ts";
import { FieldType, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/** An extract step's output: `number` and `total` found, `po` and `paid` not. */
const OUTPUT = {
  fields: { number: "INV-4", total: { amount: 1334.56, currency: "EUR" }, items: [{ Qty: 1 }] },
  missing: ["po", "paid"],
  found: {
    number: { page: 1, text: "Invoice number: INV-4", by: "label", label: "Invoice number", box: [50, 54, 191.7, 64] },
    total: { page: 2, text: "Total: EUR 1.334,56", by: "pattern" },
  },
};

const PIPELINE = create(PipelineSchema, {
  nodes: [
    { id: "parse", kind: { case: "parse", value: {} } },
    {
      id: "extract",
      kind: {
        case: "extract",
        value: {
          fields: [
            { name: "number", required: true },
            { name: "po" },
            { name: "total", type: FieldType.MONEY },
            { name: "paid", type: FieldType.BOOLEAN, required: true },
          ],
          tables: [{ name: "items", headers: ["Qty"] }],
        },
      },
    },
  ],
});

describe("the review page's fields", () => {
  it("come by name and type from the extract node, required and missing first, each with where it was read", () => {
    const fields = reviewFields("extract", OUTPUT, extractNodesOf(PIPELINE).get("extract"));
    expect(fields.map(({ name, type, required, missing }) => [name, type, required, missing])).toEqual([
      ["paid", "yes/no", true, true],
      ["po", "text", false, true],
      ["number", "text", true, false],
      ["total", "money", false, false],
      ["items", "table", false, false],
    ]);
    expect(fields[2]!.found).toEqual(OUTPUT.found.number);
    expect(fields[0]!.found).toBeUndefined();
  });

  it("without the pipe's settings (a reviewer may not read pipes), come from the output: types read from the values, required unknown", () => {
    const fields = reviewFields("extract", { ...OUTPUT, fields: { ...OUTPUT.fields, date: "2026-11-03", count: 3, ok: true } }, undefined);
    expect(fields.map(({ name, type, required, missing }) => [name, type, required, missing])).toEqual([
      ["po", "text", undefined, true],
      ["paid", "text", undefined, true],
      ["number", "text", undefined, false],
      ["total", "money", undefined, false],
      ["items", "table", undefined, false],
      ["date", "date", undefined, false],
      ["count", "number", undefined, false],
      ["ok", "yes/no", undefined, false],
    ]);
  });

  it("show money as amount and currency, yes/no as yes or no", () => {
    expect([valueText({ amount: 12.5, currency: "EUR" }), valueText(true), valueText(false), valueText(null), valueText(3)]).toEqual([
      "12.5 EUR",
      "yes",
      "no",
      "",
      "3",
    ]);
  });

  it("send what the reviewer typed as text (the service types it); a missing field given a value leaves missing, a blank one stays missing", () => {
    const data = { extract: OUTPUT, validate: { valid: true } };
    const edits = new Map([
      [editKey("extract", "number"), { node: "extract", name: "number", value: "INV-5" }],
      [editKey("extract", "po"), { node: "extract", name: "po", value: "PO-1" }],
      [editKey("extract", "paid"), { node: "extract", name: "paid", value: "" }],
      // A step the data no longer has (the run was decided elsewhere) is skipped.
      [editKey("gone", "x"), { node: "gone", name: "x", value: "1" }],
    ]);
    expect(withEdits(data, edits)).toEqual({
      extract: { ...OUTPUT, fields: { ...OUTPUT.fields, number: "INV-5", po: "PO-1" }, missing: ["paid"] },
      validate: { valid: true },
    });
  });
});
