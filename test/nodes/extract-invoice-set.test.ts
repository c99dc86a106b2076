import { fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ExtractNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { runExtract } from "../../src/nodes/extract.ts";
import type { NodeContext } from "../../src/nodes/run-data.ts";
import { parseDocument } from "../../src/parse/parse-document.ts";
import { INVOICE_EXTRACT } from "../../src/pipes/invoices-example.ts";
import { invoiceSet } from "../support/invoices/index.ts";

const context: NodeContext = {
  document: { name: "invoice", format: "pdf", contentType: "application/pdf", size: 1 },
  testMode: false,
  signal: new AbortController().signal,
};

describe("the extraction set: generated invoices read with the worked example's extract node", async () => {
  const invoices = await invoiceSet();
  const node = fromJson(ExtractNodeSchema, INVOICE_EXTRACT);

  it("has at least 60 invoices in PDF, DOCX, plain text and HTML", () => {
    expect(invoices.length).toBeGreaterThanOrEqual(60);
    expect(new Set(invoices.map(({ format }) => format))).toEqual(new Set(["pdf", "docx", "txt", "html"]));
  });

  it("reads every field of every invoice right", async () => {
    const wrong: string[] = [];
    for (const invoice of invoices) {
      const parse = await parseDocument(invoice.format, invoice.bytes, { ocr: "never", rulingLines: true });
      const { fields } = await runExtract(node, { parse }, context);
      const { paid: _, ...read } = fields;
      const expected = JSON.parse(JSON.stringify(invoice.truth));
      for (const name of new Set([...Object.keys(expected), ...Object.keys(read)])) {
        if (JSON.stringify(read[name]) !== JSON.stringify(expected[name]))
          wrong.push(`${invoice.name} ${name}: ${JSON.stringify(read[name])} (want ${JSON.stringify(expected[name])})`);
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
