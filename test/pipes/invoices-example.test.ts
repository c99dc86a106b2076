import { fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClassifyNodeSchema, ExtractNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runClassify } from "../../src/runs/nodes/classify/classify.ts";
import { runExtract } from "../../src/runs/nodes/extract/extract.ts";
import type { NodeContext } from "../../src/runs/nodes/run-data.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";
import { renderInvoice } from "../support/invoices/render.ts";

const context: NodeContext = {
  document: { name: "invoice", format: "pdf", contentType: "application/pdf", size: 1 },
  testMode: false,
  signal: new AbortController().signal,
  organizationId: "org-test",
};

/** Issue 47.1's header block: the customer's address on the left, the invoice's labels and values on the right. */
const HEADER_BLOCK = {
  header: [],
  body: [
    { kind: "text" as const, lines: ["INVOICE"] },
    {
      kind: "grid" as const,
      ruled: false,
      rows: [
        ["Bill to:", "Invoice No.:", "INV-2026-0042"],
        ["Northwind Traders Ltd", "Invoice date:", "3 Nov 2026"],
        ["4 Harbour Road", "Due date:", "3 Dec 2026"],
      ],
    },
    { kind: "text" as const, lines: ["Total: EUR 1.334,56"] },
  ],
  footer: [],
};

const nodes = invoicesExample(INVOICES_EXAMPLE_DEFAULTS).nodes as { id: string; extract?: unknown; classify?: unknown }[];

describe("the worked invoices example's classify node", () => {
  const node = fromJson(ClassifyNodeSchema, nodes.find(({ id }) => id === "classify")!.classify as never);

  it.each(["FACTURA", "FATTURA", "FACTUUR", "Rechnung", "Facture", "Invoice"])("sends an invoice headed %s on to extract", async (title) => {
    const { class: kind } = await runClassify(node, { parse: { text: `${title}\nNorthwind Traders Ltd` } }, context);
    expect(kind).toBe("invoice");
  });
});

describe("the worked invoices example's extract node", () => {
  const node = fromJson(ExtractNodeSchema, nodes.find(({ id }) => id === "extract")!.extract as never);

  it.each(["pdf", "docx", "txt", "html"] as const)("reads the invoice number beside its label in a two-column header block (%s)", async (format) => {
    const parse = await parseDocument(format, await renderInvoice(HEADER_BLOCK, format, { tabs: true }), { ocr: "never" });
    const { fields } = await runExtract(node, { parse }, context);
    expect(fields).toMatchObject({
      number: "INV-2026-0042",
      date: "2026-11-03",
      due: "2026-12-03",
      customer: "Northwind Traders Ltd",
      total: { amount: 1334.56, currency: "EUR" },
    });
  });
});
