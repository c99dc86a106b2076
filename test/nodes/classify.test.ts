import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClassifyNodeSchema, KeywordMatch } from "../../gen/docpipe/v1/pipe_pb.js";
import { runClassify } from "../../src/runs/nodes/classify/classify.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { docxInvoice, PDF_INVOICE, textLayerPdf } from "./invoices.ts";
import { nodeContext, stepErrorOf } from "./support.ts";

const NODE = create(ClassifyNodeSchema, {
  classes: [
    {
      name: "invoice",
      rules: [
        { keywords: ["invoice", "rechnung"], match: KeywordMatch.ANY, weight: 2 },
        { keywords: ["total", "invoice number"], match: KeywordMatch.ALL },
        { pattern: "\\bINV-\\d{4}-\\d+", weight: 3 },
      ],
    },
    { name: "contract", rules: [{ keywords: ["agreement", "parties"], match: KeywordMatch.ALL, weight: 5 }] },
    { name: "long_pdf", rules: [{ formats: ["pdf"], minPages: 5 }] },
    { name: "scan_by_name", rules: [{ fileNamePattern: "^scan_.*\\.pdf$", weight: 10 }] },
  ],
  otherwise: "unknown",
});

describe("classify", async () => {
  const invoicePdf = await parseDocument("pdf", textLayerPdf(PDF_INVOICE), { ocr: "never" });

  it("adds the weights of the rules that hold: any keyword, all keywords, a pattern", async () => {
    expect(await runClassify(NODE, { parse: invoicePdf }, nodeContext())).toEqual({
      class: "invoice",
      score: 6,
      scores: { invoice: 6, contract: 0, long_pdf: 0, scan_by_name: 0 },
    });
  });

  it("matches keywords as whole words, whatever their case, and phrases across line breaks", async () => {
    const docx = await parseDocument("docx", docxInvoice());
    // "Rechnung" (any: 2); "Total" and "Invoice number" (all: 1); no INV- number.
    expect(
      (await runClassify(NODE, { parse: docx }, nodeContext({ document: { name: "r.docx", format: "docx", contentType: "", size: 1 } }))).scores.invoice,
    ).toBe(3);
    const split = { text: "The Parties to this\nAgreement" };
    expect((await runClassify(NODE, { parse: split }, nodeContext())).class).toBe("contract");
    expect((await runClassify(NODE, { parse: { text: "agreements between partiesX" } }, nodeContext())).class).toBe("unknown");
  });

  it("reads the file name and the page count", async () => {
    expect(
      await runClassify(
        NODE,
        { parse: { text: "", pageCount: 1 } },
        nodeContext({ document: { name: "SCAN_0001.pdf", format: "pdf", contentType: "", size: 1 } }),
      ),
    ).toEqual({
      class: "scan_by_name",
      score: 10,
      scores: { invoice: 0, contract: 0, long_pdf: 0, scan_by_name: 10 },
    });
    expect((await runClassify(NODE, { parse: { format: "pdf", text: "", pageCount: 7 } }, nodeContext())).class).toBe("long_pdf");
    expect((await runClassify(NODE, { parse: { format: "docx", text: "", pageCount: 7 } }, nodeContext())).class).toBe("unknown");
  });

  it("gives the otherwise class, or 'other', when no class scores", async () => {
    expect(await runClassify(NODE, { parse: { text: "a shopping list" } }, nodeContext())).toMatchObject({ class: "unknown", score: 0 });
    expect((await runClassify(create(ClassifyNodeSchema, { classes: [] }), { parse: { text: "" } }, nodeContext())).class).toBe("other");
  });

  it("prefers the class listed first on a tie", async () => {
    const node = create(ClassifyNodeSchema, {
      classes: [
        { name: "a", rules: [{ keywords: ["x"] }] },
        { name: "b", rules: [{ keywords: ["x"] }] },
      ],
    });
    expect((await runClassify(node, { parse: { text: "x" } }, nodeContext())).class).toBe("a");
  });

  it("reports an invalid pattern with pattern_invalid and its field", async () => {
    const node = create(ClassifyNodeSchema, { classes: [{ name: "a", rules: [{ pattern: "(unclosed" }] }] });
    const error = await stepErrorOf(() => runClassify(node, { parse: { text: "x" } }, nodeContext()));
    expect(error.code).toBe("pattern_invalid");
    expect(error.details).toEqual({ field: "classify.classes[0].rules[0].pattern" });
  });
});
