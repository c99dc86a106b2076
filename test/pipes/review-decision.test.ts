import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DateOrder, FieldType, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { ReviewDataError, revalidatedCorrections, typedCorrections } from "../../src/runs/pipes/review-decision.ts";

const pipeline = create(PipelineSchema, {
  nodes: [
    { id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 1 } } },
    { id: "read", kind: { case: "parse", value: {} } },
    {
      id: "extract",
      kind: {
        case: "extract",
        value: {
          dateOrder: DateOrder.MDY,
          fields: [
            { name: "number", labels: ["Invoice"] },
            { name: "quantity", labels: ["Qty"], type: FieldType.NUMBER },
            { name: "due", labels: ["Due"], type: FieldType.DATE },
            { name: "total", labels: ["Total"], type: FieldType.MONEY, currency: "usd" },
            { name: "paid", labels: ["Paid"], type: FieldType.BOOLEAN },
          ],
          tables: [{ name: "items", headers: ["Item"] }],
        },
      },
    },
  ],
});

function refusal(corrected: Record<string, unknown>): [string, string] {
  try {
    typedCorrections(pipeline, corrected);
  } catch (error) {
    if (error instanceof ReviewDataError) return [error.field, error.message];
    throw error;
  }
  throw new Error("not refused");
}

describe("a reviewer's corrections of extract fields", () => {
  it("take each field's type, as the step's own values have it; text fields and JSON values stay as sent", () => {
    const corrected = {
      read: { text: "left alone" },
      extract: {
        fields: { number: "0042", quantity: "1,234.5", due: "11/03/2026", total: "12.50", paid: "yes", items: [{ Item: "pen" }] },
        missing: [],
      },
    };
    expect(typedCorrections(pipeline, corrected)).toEqual({
      read: { text: "left alone" },
      extract: {
        fields: {
          number: "0042",
          quantity: 1234.5,
          due: "2026-11-03",
          total: { amount: 12.5, currency: "USD" },
          paid: true,
          items: [{ Item: "pen" }],
        },
        missing: [],
      },
    });
    // Already typed (a found value the reviewer left or sent as JSON): unchanged.
    expect(typedCorrections(pipeline, { extract: { fields: { quantity: 3, total: { amount: 1 } } } })).toEqual({
      extract: { fields: { quantity: 3, total: { amount: 1 } } },
    });
  });

  it("read a blank box of a typed field as the value cleared (null), as Edit as JSON would send it", () => {
    expect(typedCorrections(pipeline, { extract: { fields: { quantity: " ", due: "", total: { amount: "", currency: "USD" }, number: "" } } })).toEqual({
      extract: { fields: { quantity: null, due: null, total: { amount: null, currency: "USD" }, number: "" } },
    });
  });

  it("refuse text that is no value of the field's type, and text for a table, naming the field", () => {
    expect(refusal({ extract: { fields: { quantity: "three" } } })).toEqual([
      "data.extract.fields.quantity",
      '"three" is not a value of the field\'s type (number)',
    ]);
    expect(refusal({ extract: { fields: { due: "soon" } } })[0]).toBe("data.extract.fields.due");
    expect(refusal({ extract: { fields: { items: "pen, 2" } } })).toEqual([
      "data.extract.fields.items",
      "a table is a list of rows, each an object keyed by the header: edit the data as JSON to give one",
    ]);
  });
});

describe("a reviewer's correction inside a found money value", () => {
  it('types the amount the console\'s amount box sends as text ("12,50", which Number() cannot read), as it types a money field sent as text', () => {
    // The review page shows a found money value as two boxes, amount and currency; the amount box keeps
    // text that Number() cannot read ("12,50") as text, so the field arrives as {amount: "12,50", currency}.
    // typedCorrections types only a field that is text as a whole: the amount stays a string, and a later
    // route, transform or JSON Schema reads "12,50" where the step's own values have 12.5.
    const typed = typedCorrections(pipeline, { extract: { fields: { total: { amount: "12,50", currency: "USD" } } } }) as {
      extract: { fields: { total: { amount: unknown } } };
    };
    expect(typed.extract.fields.total.amount).toBe(12.5);
  });
});

describe("a validate node before the review, after an approval with corrections", () => {
  const schema = JSON.stringify({ type: "object", required: ["total"], properties: { total: { type: "number" } } });
  const checked = create(PipelineSchema, {
    nodes: [
      ...pipeline.nodes,
      { id: "check", kind: { case: "validate", value: { select: "extract.fields", schema, continueOnInvalid: true } } },
      { id: "review", kind: { case: "review", value: { when: "check.valid = false" } } },
    ],
  });
  const shown = {
    file: { name: "a.pdf" },
    extract: { fields: { number: "7" }, missing: ["total"] },
    check: { valid: false, errors: [{ path: "/total", message: "must have required property 'total'" }] },
  };
  const caller = { organizationId: "org-review", signal: new AbortController().signal };

  it("checks the corrected data again: the run goes on with the verdict on what the person approved", async () => {
    const corrected = { ...shown, extract: { fields: { number: "7", total: 12.5 }, missing: [] } };
    const revalidated = await revalidatedCorrections(checked, shown, corrected, caller);
    expect(revalidated.check).toEqual({ valid: true, errors: [] });
    expect(revalidated.extract).toEqual(corrected.extract);
  });

  it("checks the data as the node first read it, without its own earlier verdict", async () => {
    const whole = create(PipelineSchema, {
      nodes: [...pipeline.nodes, { id: "check", kind: { case: "validate", value: { schema: JSON.stringify({ not: { required: ["check"] } }) } } }],
    });
    const revalidated = await revalidatedCorrections(whole, shown, { extract: { fields: { total: 1 } } }, caller);
    expect(revalidated.check).toEqual({ valid: true, errors: [] });
  });

  it("records a check that still fails, and keeps a verdict the reviewer changed as sent", async () => {
    const wrong = await revalidatedCorrections(checked, shown, { extract: { fields: { number: "7", total: "lots" } } }, caller);
    expect(wrong.check).toEqual({ valid: false, errors: [{ path: "/total", message: "must be number" }] });
    const overruled = { valid: true, errors: [], note: "checked by hand" };
    expect((await revalidatedCorrections(checked, shown, { ...shown, check: overruled }, caller)).check).toEqual(overruled);
  });
});
