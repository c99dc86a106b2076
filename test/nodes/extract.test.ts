import { create } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { DateOrder, type ExtractNode, ExtractNodeSchema, FieldType } from "../../gen/docpipe/v1/pipe_pb.js";
import { runExtract } from "../../src/runs/nodes/extract/extract.ts";
import { checkExtractSettings } from "../../src/runs/nodes/extract/settings.ts";
import type { NodeContext } from "../../src/runs/nodes/run-data.ts";
import { StepError } from "../../src/runs/step-error.ts";
import { closeOcr } from "../../src/documents/parse/ocr.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { pdfOf as scannedPdf } from "../parse/ocr-samples.ts";
import { longestStall } from "../support/event-loop.ts";
import { DOCX_INVOICE, docxInvoice, PDF_INVOICE, SCANNED_INVOICE, textLayerPdf } from "./invoices.ts";

afterAll(closeOcr);

const context: NodeContext = {
  document: { name: "invoice.pdf", format: "pdf", contentType: "application/pdf", size: 1 },
  testMode: false,
  signal: new AbortController().signal,
  organizationId: "org-test",
};

function extractNode(init: Parameters<typeof create<typeof ExtractNodeSchema>>[1]): ExtractNode {
  return create(ExtractNodeSchema, init);
}

describe("extract from a PDF with a text layer", async () => {
  const parse = await parseDocument("pdf", textLayerPdf(PDF_INVOICE), { ocr: "never" });

  it("reads every type by label on the same line, or by pattern", async () => {
    const node = extractNode({
      fields: [
        { name: "number", labels: ["Invoice number"], required: true },
        { name: "date", labels: ["Invoice date"], type: FieldType.DATE },
        { name: "due", labels: ["Due date"], type: FieldType.DATE },
        { name: "total", labels: ["Total"], type: FieldType.MONEY, required: true },
        { name: "total_number", pattern: "Total:\\s*EUR\\s*([\\d.,]+)", type: FieldType.NUMBER },
        { name: "paid", labels: ["Paid"], type: FieldType.BOOLEAN },
      ],
      dateOrder: DateOrder.DMY,
    });
    const output = await runExtract(node, { "parse-1": parse }, context);
    expect(output.fields).toEqual({
      number: "INV-2026-0042",
      date: "2026-11-03",
      due: "2026-12-03",
      total: { amount: 1334.56, currency: "EUR" },
      total_number: 1334.56,
      paid: false,
    });
    expect(output.missing).toEqual([]);
    expect(output.found.number).toEqual({
      page: 1,
      text: "Invoice number: INV-2026-0042",
      by: "label",
      label: "Invoice number",
      relation: "same",
      place: "line",
      region: "body",
      box: [50, 54, 191.7, 64],
    });
    // A pattern's match is placed at the line that holds it.
    expect(output.found.total_number).toEqual({ page: 1, text: "Total: EUR 1.334,56", by: "pattern", box: [50, 118, 140.6, 128] });
  });

  it("fails with extract_missing_fields naming the required fields not found", async () => {
    const node = extractNode({
      fields: [
        { name: "order", labels: ["Order number"], required: true },
        { name: "vat", labels: ["VAT id"] },
      ],
    });
    const error = await runExtract(node, { "parse-1": parse }, context).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StepError);
    expect((error as StepError).code).toBe("extract_missing_fields");
    expect((error as StepError).message).toBe("extract_missing_fields: required fields not found: order");
    expect((error as StepError).details).toEqual({ missing: ["order"] });
  });

  it("lists missing fields and goes on when the node continues on missing fields", async () => {
    const node = extractNode({ fields: [{ name: "order", labels: ["Order number"], required: true }], continueOnMissing: true });
    expect(await runExtract(node, { "parse-1": parse }, context)).toEqual({ fields: {}, missing: ["order"], found: {} });
  });

  it("skips a label whose text holds no value of the field's type and takes the next place that does", async () => {
    const node = extractNode({ fields: [{ name: "amount", labels: ["Description", "Total"], type: FieldType.MONEY }] });
    expect((await runExtract(node, { "parse-1": parse }, context)).fields.amount).toEqual({ amount: 1334.56, currency: "EUR" });
  });
});

describe("extract from a scanned invoice read by OCR", () => {
  it("reads US dates, amounts with a dollar sign, numbers and booleans from the OCR text", async () => {
    const parse = await parseDocument("pdf", await scannedPdf([{ scan: SCANNED_INVOICE }]), { ocr: "auto" });
    expect(parse.ocrPages).toEqual([1]);
    const node = extractNode({
      fields: [
        { name: "number", pattern: "Invoice No\\.?\\s*(\\d+)", type: FieldType.STRING, required: true },
        { name: "date", labels: ["Date"], type: FieldType.DATE, required: true },
        { name: "amount", labels: ["Amount due"], type: FieldType.MONEY, required: true },
        { name: "quantity", labels: ["Quantity"], type: FieldType.NUMBER },
        { name: "paid", labels: ["Paid"], type: FieldType.BOOLEAN },
      ],
      dateOrder: DateOrder.MDY,
    });
    const output = await runExtract(node, { "parse-1": parse }, context);
    expect(output.fields).toEqual({ number: "7781", date: "2026-11-03", amount: { amount: 1334.56, currency: "USD" }, quantity: 3, paid: true });
    expect(output.found.amount).toMatchObject({ page: 1, text: "Amount due: $1,334.56", by: "label", relation: "same" });
  }, 120_000);
});

describe("extract from a DOCX", async () => {
  const parse = await parseDocument("docx", docxInvoice());

  it("reads a value on the line below its label, a tab-set table and amounts with a trailing euro sign", async () => {
    expect(parse.text).toBe(DOCX_INVOICE.join("\n\n"));
    const node = extractNode({
      fields: [
        { name: "number", labels: ["Invoice number"], required: true },
        { name: "date", labels: ["Datum"], type: FieldType.DATE },
        { name: "total", labels: ["Total"], type: FieldType.MONEY },
        { name: "paid", labels: ["Paid"], type: FieldType.BOOLEAN },
      ],
      tables: [{ name: "items", headers: ["Qty"], columnTypes: { qty: FieldType.NUMBER, amount: FieldType.MONEY } }],
    });
    const output = await runExtract(node, { parse }, { ...context, document: { ...context.document, format: "docx" } });
    expect(output.fields).toEqual({
      number: "R-55/2026",
      date: "2026-11-03",
      total: { amount: 1334.56, currency: "EUR" },
      paid: true,
      items: [
        { Description: "Consulting", Qty: 1.5, Amount: { amount: 1200, currency: "EUR" } },
        { Description: "Travel", Qty: 1, Amount: { amount: 134.56, currency: "EUR" } },
      ],
    });
    expect(output.found.number).toEqual({
      page: 1,
      text: "Invoice number / R-55/2026",
      by: "label",
      label: "Invoice number",
      relation: "below",
      place: "line",
      region: "body",
    });
    expect(output.found.items).toEqual({ page: 1, text: "Description | Qty | Amount", by: "headers" });
  });
});

/** A PDF's parse output holding one Table element of `rows` on `page`, placed at `bbox` when given. */
function tableParse(page: number, rows: string[][], bbox?: [number, number, number, number]) {
  return { format: "pdf", text: "ignored", elements: [{ type: "Table", text: "", page, table: { rows }, ...(bbox === undefined ? {} : { bbox }) }] };
}

describe("extract from structured elements", () => {
  it("reads the cell beside or below a label in a Table element", async () => {
    const parse = tableParse(2, [
      ["Invoice no.", "Date"],
      ["A-17", "5 Jan 2027"],
      ["Net & VAT", "EUR 10,00"],
    ]);
    const node = extractNode({
      fields: [
        { name: "number", labels: ["Invoice no."] },
        { name: "date", labels: ["Date"], type: FieldType.DATE },
        { name: "net", labels: ["Net & VAT"], type: FieldType.MONEY },
      ],
    });
    const output = await runExtract(node, { "parse-1": parse }, context);
    expect(output.fields).toEqual({ number: "A-17", date: "2027-01-05", net: { amount: 10, currency: "EUR" } });
    const inTable = { page: 2, by: "label", relation: "below", place: "cell", region: "body" };
    expect(output.found.number).toEqual({ ...inTable, text: "Invoice no. / A-17", label: "Invoice no." });
    expect(output.found.date).toEqual({ ...inTable, text: "Date / 5 Jan 2027", label: "Date" });
  });

  it("says where a table and a value in it were read: the Table element's page and box", async () => {
    const parse = tableParse(
      3,
      [
        ["Invoice no.", "A-17"],
        ["Qty", "Amount"],
        ["2", "10.00"],
      ],
      [40, 300, 520, 360],
    );
    const node = extractNode({ fields: [{ name: "number", labels: ["Invoice no."] }], tables: [{ name: "items", headers: ["Invoice no."] }] });
    const output = await runExtract(node, { "parse-1": parse }, context);
    expect(output.found.number).toMatchObject({ page: 3, relation: "beside", box: [40, 300, 520, 360] });
    expect(output.found.items).toEqual({ page: 3, text: "Invoice no. | A-17", by: "headers", box: [40, 300, 520, 360] });
  });

  it("gives a table's money cells written without a currency the table's currency; a cell's own currency wins", async () => {
    const parse = tableParse(1, [
      ["Item", "Amount"],
      ["Consulting", "1,200.00"],
      ["Travel", "€ 34,50"],
      ["Note", "see below"],
    ]);
    const table = { name: "items", headers: ["Amount"], columnTypes: { amount: FieldType.MONEY } };
    const withCurrency = await runExtract(extractNode({ tables: [{ ...table, currency: "usd" }] }), { parse }, context);
    expect(withCurrency.fields.items).toEqual([
      { Item: "Consulting", Amount: { amount: 1200, currency: "USD" } },
      { Item: "Travel", Amount: { amount: 34.5, currency: "EUR" } },
      { Item: "Note", Amount: "see below" },
    ]);
    const without = await runExtract(extractNode({ tables: [table] }), { parse }, context);
    expect((without.fields.items as { Amount: unknown }[])[0]!.Amount).toEqual({ amount: 1200 });
    expect(() => checkExtractSettings(extractNode({ tables: [{ ...table, currency: "dollars" }] }), "extract")).toThrow(
      "extract.tables[0].currency: must be an ISO 4217 code such as EUR",
    );
  });

  it("looks for the line after a label in one pass: a page of 100,000 lines that each end with a label does not hold the event loop", async () => {
    const parse = { text: `Invoice\n${"Total\n".repeat(100_000)}12,50 EUR` };
    const node = extractNode({ fields: [{ name: "total", labels: ["Total"], type: FieldType.MONEY }] });
    const { outcome, stallMs } = await longestStall(() => runExtract(node, { parse }, context));
    // Every label ends its line; only the last one's next line holds an amount.
    expect(outcome).toMatchObject({ status: "fulfilled", value: { fields: { total: { amount: 12.5, currency: "EUR" } } } });
    // Copying the rest of the page for each label's line took 13 s here (72 s for a megabyte); one
    // pass takes a few hundred ms, and read 1.06 s once beside the bench: the bound sits between.
    expect(stallMs).toBeLessThan(5_000);
  });

  it("fails with source_missing when the run has no parse output", async () => {
    await expect(runExtract(extractNode({ fields: [] }), { trigger: { fileId: "x" } }, context)).rejects.toThrow(
      "source_missing: the run has no parse output before this node",
    );
  });

  it("stops a pattern that backtracks catastrophically with pattern_timeout", async () => {
    const parse = { text: `${"a".repeat(40)}!` };
    const node = extractNode({ fields: [{ name: "x", pattern: "^(a+)+$" }] });
    let settled = false;
    const matching = runExtract(node, { parse }, context).finally(() => {
      settled = true;
    });
    // The event loop goes on while the thread backtracks: the match is awaited, not waited for.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    // Matches started meanwhile run beside it, each within its own budget.
    const next = extractNode({ fields: [{ name: "n", pattern: "Invoice (\\d+)", type: FieldType.NUMBER }] });
    const beside = Array.from({ length: 6 }, () => runExtract(next, { parse: { text: "Invoice 42" } }, context));
    await expect(matching).rejects.toThrow(/^pattern_timeout: extract\.fields\[0\]\.pattern: the pattern took longer than/);
    for (const output of await Promise.all(beside)) expect(output.fields).toEqual({ n: 42 });
    // The thread that ran it was ended; the next pattern runs in a new one.
    expect((await runExtract(next, { parse: { text: "Invoice 42" } }, context)).fields).toEqual({ n: 42 });
  });
});
