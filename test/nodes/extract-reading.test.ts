import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type ExtractNode, ExtractNodeSchema, FieldType } from "../../gen/docpipe/v1/pipe_pb.js";
import { runExtract } from "../../src/runs/nodes/extract/extract.ts";
import type { NodeContext } from "../../src/runs/nodes/run-data.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { renderInvoice } from "../support/invoices/render.ts";
import { docxOfBody } from "../parse/samples.ts";
import { longestStall } from "../support/event-loop.ts";

// Issue 52's patterns and issue 47.1: one reading model for label/value pairs in tables and lines.

const context: NodeContext = {
  document: { name: "invoice", format: "txt", contentType: "text/plain", size: 1 },
  testMode: false,
  signal: new AbortController().signal,
  organizationId: "org-test",
};

function extractNode(init: Parameters<typeof create<typeof ExtractNodeSchema>>[1]): ExtractNode {
  return create(ExtractNodeSchema, init);
}

/** A parse output holding one Table element of `rows`, and the text given. */
function tableParse(rows: string[][], text = "") {
  return { format: "pdf", text, elements: [{ type: "Table", text: "", page: 1, table: { rows } }] };
}

async function fieldsOf(node: ExtractNode, parse: unknown) {
  return (await runExtract(node, { parse }, context)).fields;
}

const HEADER_BLOCK = "Bill to:\tInvoice No.:\tINV-4\nNorthwind Traders Ltd\tInvoice date:\t3 Nov 2026\n4 Harbour Road\tDue date:\t3 Dec 2026\n";

const headerFields = extractNode({
  fields: [
    { name: "number", labels: ["Invoice No"] },
    { name: "customer", labels: ["Bill to"] },
    { name: "date", labels: ["Invoice date"], type: FieldType.DATE },
    { name: "due", labels: ["Due date"], type: FieldType.DATE },
  ],
});

describe("issue 47.1: a value beside its label in a header block", () => {
  it("reads the cell beside the label, not the label below it, in a Table element", async () => {
    const parse = tableParse([
      ["Bill to:", "Invoice No.:", "INV-2026-0042"],
      ["Northwind Traders Ltd", "Invoice date:", "3 Nov 2026"],
      ["4 Harbour Road", "Due date:", "3 Dec 2026"],
    ]);
    const output = await runExtract(extractNode({ fields: [{ name: "number", labels: ["Invoice No"] }] }), { parse }, context);
    expect(output.fields).toEqual({ number: "INV-2026-0042" });
    expect(output.found.number).toEqual({
      page: 1,
      text: "Invoice No.: | INV-2026-0042",
      by: "label",
      label: "Invoice No",
      relation: "beside",
      place: "cell",
      region: "body",
    });
  });

  it("reads every field of the header block of a plain-text file, the customer below its label", async () => {
    const parse = await parseDocument("txt", Buffer.from(HEADER_BLOCK));
    expect(await fieldsOf(headerFields, parse)).toEqual({ number: "INV-4", customer: "Northwind Traders Ltd", date: "2026-11-03", due: "2026-12-03" });
  });

  it("reads the header block of a PDF, and says where: the cell beside the label, with the table's box", async () => {
    const layout = {
      header: [],
      body: [
        {
          kind: "grid" as const,
          ruled: false,
          rows: HEADER_BLOCK.trim()
            .split("\n")
            .map((line) => line.split("\t")),
        },
      ],
      footer: [],
    };
    const parse = await parseDocument("pdf", await renderInvoice(layout, "pdf"), { ocr: "never" });
    const output = await runExtract(headerFields, { parse }, context);
    expect(output.fields).toEqual({ number: "INV-4", customer: "Northwind Traders Ltd", date: "2026-11-03", due: "2026-12-03" });
    expect(output.found.number).toMatchObject({ relation: "beside", label: "Invoice No", region: "body" });
    expect(output.found.number!.box).toHaveLength(4);
  });

  it("never takes a text that is itself a label: one ending with a colon, or another field's label", async () => {
    const parse = { text: "Invoice No.:\nDue date:\n\nReference\nInvoice date" };
    const node = extractNode({
      fields: [
        { name: "number", labels: ["Invoice No"] },
        { name: "reference", labels: ["Reference"] },
        { name: "date", labels: ["Invoice date"] },
      ],
      continueOnMissing: true,
    });
    expect(await runExtract(node, { parse }, context)).toMatchObject({ fields: {}, missing: ["number", "reference", "date"] });
  });
});

describe("issue 52.1: a block of label/value pairs is not a table with a header row", () => {
  const node = extractNode({ fields: [{ name: "number", labels: ["Rechnungsnummer"] }] });

  it("reads the value beside the first label of a DOCX key/value table", async () => {
    const cell = (text: string) => `<w:tc><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:tc>`;
    const parse = await parseDocument(
      "docx",
      docxOfBody(`<w:tbl><w:tr>${cell("Rechnungsnummer:")}${cell("R-2026-17")}</w:tr><w:tr>${cell("Lieferdatum:")}${cell("3.11.2026")}</w:tr></w:tbl>`),
    );
    expect(await fieldsOf(node, parse)).toEqual({ number: "R-2026-17" });
  });

  it("reads the value beside the first label of an HTML table of th and td cells", async () => {
    const html = "<table><tr><th>Rechnungsnummer</th><td>R-2026-17</td></tr><tr><th>Lieferdatum</th><td>3.11.2026</td></tr></table>";
    expect(await fieldsOf(node, await parseDocument("html", Buffer.from(html)))).toEqual({ number: "R-2026-17" });
  });

  it("reads the value beside the first label of aligned plain text", async () => {
    const parse = await parseDocument("txt", Buffer.from("Rechnungsnummer:   R-2026-17\nLieferdatum:       3.11.2026\n"));
    expect(await fieldsOf(node, parse)).toEqual({ number: "R-2026-17" });
  });
});

describe("issue 52.2: an amount is not a rate, an identifier or a parenthesis before a rate", () => {
  const vat = (labels: string[], currency = "") => extractNode({ fields: [{ name: "vat", labels, type: FieldType.MONEY, currency }], continueOnMissing: true });

  it("skips the rate beside a VAT label for the amount in the next cell", async () => {
    expect(await fieldsOf(vat(["MwSt."]), tableParse([["MwSt. 7 %", "14,00 €"]]))).toEqual({ vat: { amount: 14, currency: "EUR" } });
  });

  it("reads a rate in parentheses as part of the label, not as a negative amount", async () => {
    expect(await fieldsOf(vat(["Sales tax"], "USD"), tableParse([["Sales tax (8.25%)", "41.25"]]))).toEqual({ vat: { amount: 41.25, currency: "USD" } });
    expect(await fieldsOf(vat(["Sales tax"]), { text: "Sales tax (8.25%): $41.25" })).toEqual({ vat: { amount: 41.25, currency: "USD" } });
  });

  it("reads no amount from a VAT exemption's article number nor from a VAT registration number", async () => {
    const parse = { text: "Exonération de TVA, article 262 ter, I du CGI\nVAT Reg. No. GB 123 4567 89\nTVA non applicable, art. 293 B du CGI" };
    expect(await runExtract(vat(["TVA", "VAT"], "EUR"), { parse }, context)).toMatchObject({ fields: {}, missing: ["vat"] });
  });

  it("reads a credit note's amount in parentheses as negative when the parentheses hold the whole amount", async () => {
    const node = extractNode({ fields: [{ name: "total", labels: ["Total"], type: FieldType.MONEY }] });
    expect(await fieldsOf(node, { text: "Total: (1,234.56) USD" })).toEqual({ total: { amount: -1234.56, currency: "USD" } });
    expect(await fieldsOf(node, { text: "Total: -£12.00" })).toEqual({ total: { amount: -12, currency: "GBP" } });
  });
});

describe("issue 52.3: a label heading a column of amounts is a column, not a field", () => {
  it("reads the Total line, not the first amount of the line items' Total column", async () => {
    const parse = tableParse(
      [
        ["Description", "Qty", "Total"],
        ["Consulting", "2", "1.200,00 €"],
        ["Travel", "1", "134,56 €"],
      ],
      "Total: 1.334,56 €",
    );
    const node = extractNode({ fields: [{ name: "total", labels: ["Total"], type: FieldType.MONEY }] });
    const output = await runExtract(node, { parse }, context);
    expect(output.fields).toEqual({ total: { amount: 1334.56, currency: "EUR" } });
    expect(output.found.total).toMatchObject({ text: "Total: 1.334,56 €", relation: "same", place: "line" });
  });
});

describe("issue 52.4: a value runs to the end of its line, not of its cell", () => {
  const node = extractNode({ fields: [{ name: "customer", labels: ["Kunde"] }] });

  it("reads the name, not the address, from a DOCX cell of several paragraphs and line breaks", async () => {
    const cell =
      "<w:tc><w:p><w:r><w:t>Kunde: Nordwind AG</w:t><w:br/><w:t>Hafenstraße 4</w:t></w:r></w:p><w:p><w:r><w:t>20457 Hamburg</w:t></w:r></w:p></w:tc>";
    expect(await fieldsOf(node, await parseDocument("docx", docxOfBody(`<w:tbl><w:tr>${cell}<w:tc><w:p/></w:tc></w:tr></w:tbl>`)))).toEqual({
      customer: "Nordwind AG",
    });
  });

  it("reads the name from an HTML cell whose lines are set with <br>, and the first line of a nested table beside a label", async () => {
    const html =
      "<table><tr><td>Kunde: Nordwind AG<br>Hafenstraße 4</td><td>Lieferant</td><td><table><tr><td>ACME GmbH</td></tr><tr><td>Berlin</td></tr></table></td></tr></table>";
    const parse = await parseDocument("html", Buffer.from(html));
    const both = extractNode({ fields: [...node.fields, { name: "supplier", labels: ["Lieferant"] }] });
    expect(await fieldsOf(both, parse)).toEqual({ customer: "Nordwind AG", supplier: "ACME GmbH" });
  });
});

describe("issue 52.5: a label matches a text's whole label part, never a word inside a longer label", () => {
  it("does not read Customer from Customer ID, nor Client from Numéro client", async () => {
    const node = extractNode({ fields: [{ name: "customer", labels: ["Customer", "Client"] }] });
    expect(await fieldsOf(node, { text: "Customer ID: 4711\nNuméro client: 88\nCustomer: Northwind Traders Ltd" })).toEqual({
      customer: "Northwind Traders Ltd",
    });
    expect(
      await fieldsOf(
        node,
        tableParse([
          ["Numéro client", "88"],
          ["Client", "Contoso SARL"],
        ]),
      ),
    ).toEqual({ customer: "Contoso SARL" });
  });

  it("matches case, accents, punctuation and spacing aside", async () => {
    const node = extractNode({ fields: [{ name: "due", labels: ["date  d'echeance"], type: FieldType.DATE }] });
    expect(await fieldsOf(node, { text: "DATE D’ÉCHÉANCE : 09/10/2026" })).toEqual({ due: "2026-10-09" });
  });
});

describe("issue 52.6: page headers and footers are searched after the body", () => {
  const layout = {
    header: ["Lieferant: ACME Handels GmbH"],
    body: [{ kind: "text" as const, lines: ["Rechnungsnummer: R-1"] }],
    footer: ["Bank: Sparkasse", "IBAN: DE89 3704 0044 0532 0130 00", "BIC: COBADEFFXXX"],
  };
  const node = extractNode({
    fields: [
      { name: "supplier", labels: ["Lieferant"] },
      { name: "iban", labels: ["IBAN"] },
    ],
  });

  it("reads a Word letterhead's supplier and its footer's IBAN", async () => {
    const output = await runExtract(node, { parse: await parseDocument("docx", await renderInvoice(layout, "docx")) }, context);
    expect(output.fields).toEqual({ supplier: "ACME Handels GmbH", iban: "DE89 3704 0044 0532 0130 00" });
    expect(output.found.iban).toMatchObject({ region: "margin", relation: "same", place: "line" });
  });

  it("takes the body's value before the margin's", async () => {
    const withBody = { ...layout, body: [...layout.body, { kind: "text" as const, lines: ["Lieferant: Nordwind AG"] }] };
    const output = await runExtract(node, { parse: await parseDocument("docx", await renderInvoice(withBody, "docx")) }, context);
    expect(output.fields.supplier).toBe("Nordwind AG");
    expect(output.found.supplier).toMatchObject({ region: "body" });
  });
});

describe("issue 52.7: one documented order", () => {
  it("takes a value on its label's line before one below a label met earlier", async () => {
    const node = extractNode({ fields: [{ name: "number", labels: ["Invoice No."] }] });
    const output = await runExtract(node, { parse: { text: "Invoice No.\nsee below\n\nInvoice No.: R-2" } }, context);
    expect(output.fields).toEqual({ number: "R-2" });
    expect(output.found.number).toMatchObject({ relation: "same", label: "Invoice No." });
  });

  it("goes by the labels' listed order among places of one kind, then by the document's order", async () => {
    const node = extractNode({ fields: [{ name: "date", labels: ["Invoice date", "Date"], type: FieldType.DATE }] });
    expect(await fieldsOf(node, { text: "Date: 5 Nov 2026\nInvoice date: 3 Nov 2026\nInvoice date: 4 Nov 2026" })).toEqual({ date: "2026-11-03" });
    // A label on its own line before a value of the first label below its own.
    expect(await fieldsOf(node, { text: "Invoice date\n3 Nov 2026\nDate: 5 Nov 2026" })).toEqual({ date: "2026-11-05" });
  });

  it("reads the cell beside a label before the cell below it", async () => {
    const node = extractNode({ fields: [{ name: "number", labels: ["Invoice No."] }] });
    expect(
      await fieldsOf(
        node,
        tableParse([
          ["Invoice No.", "A-1"],
          ["A-2", ""],
        ]),
      ),
    ).toEqual({ number: "A-1" });
  });
});

describe("hostile documents", () => {
  const node = extractNode({
    fields: [
      { name: "total", labels: ["Total", "Amount due"], type: FieldType.MONEY },
      { name: "number", labels: ["Invoice No.", "Rechnungsnummer"] },
    ],
    continueOnMissing: true,
  });

  it("reads a megabyte line of labels after a colon, a table whose every cell is a label, and wide lines of columns without holding the event loop", async () => {
    const line = { text: `Note: ${"Total ".repeat(170_000)}` };
    const cells = Array.from({ length: 400 }, () => Array.from({ length: 400 }, () => "Total"));
    // A wide line of labels over a wide line of narrower cells: each label's cell below was searched from the line's start (3.3 s for 20,000).
    const columns = { text: `${"Total  ".repeat(20_000)}\n${"x  ".repeat(60_000)}` };
    for (const parse of [line, tableParse(cells), columns]) {
      const { outcome, stallMs } = await longestStall(() => runExtract(node, { parse }, context));
      expect(outcome).toMatchObject({ status: "fulfilled", value: { missing: ["total", "number"] } });
      // Each text's words read again for every label met took 5.4 s here; a line's rest is read up to 400 characters, a text's verdict once.
      expect(stallMs).toBeLessThan(5_000);
    }
  });
});
