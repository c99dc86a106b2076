import { describe, expect, it } from "vitest";
import { pdfPages } from "../../src/documents/parse/ocr-pages.ts";
import { openPdf } from "../../src/documents/parse/parse-document.ts";
import type { PdfDocument } from "../../src/documents/parse/render-pdf.ts";
import { placedTextPdf } from "./samples.ts";

/** The numbers of the pages whose operator list is read, in order. */
function countOperatorLists(pdf: PdfDocument): number[] {
  const reads: number[] = [];
  const wrapped = new WeakSet<object>();
  const getPage = pdf.getPage.bind(pdf);
  pdf.getPage = async (pageNumber: number) => {
    const page = await getPage(pageNumber);
    if (!wrapped.has(page)) {
      wrapped.add(page);
      const read = page.getOperatorList.bind(page);
      page.getOperatorList = (...args) => {
        reads.push(pageNumber);
        return read(...args);
      };
    }
    return page;
  };
  return reads;
}

describe("a PDF's fonts' weights", () => {
  const run = (y: number, text: string, bold = false) => ({ x: 72, y, size: 10, text, bold });
  const bytes = placedTextPdf([
    [run(700, "Regular text on the first page.")],
    [run(700, "More regular text.")],
    [run(700, "Bold at last", true), run(680, "and regular text.")],
    [run(700, "Bold again", true)],
  ]);

  it("are read from the first page that uses each font: one more read of two pages of four", async () => {
    const pdf = await openPdf(bytes);
    try {
      const reads = countOperatorLists(pdf);
      const { boldFonts, layout } = await pdfPages(pdf, { ocr: "never" });
      expect(reads).toEqual([1, 3]);
      const fontOf = (text: string) => layout.flatMap((page) => page.items).find((item) => item.str === text)!.font;
      expect([...boldFonts]).toEqual([fontOf("Bold at last")]);
      expect(fontOf("Bold again")).toBe(fontOf("Bold at last"));
    } finally {
      await pdf.destroy();
    }
  });

  it("with ruling lines, come with the pages' drawings, which are read once each", async () => {
    const pdf = await openPdf(bytes);
    try {
      const reads = countOperatorLists(pdf);
      const { boldFonts } = await pdfPages(pdf, { ocr: "never", rulingLines: true });
      expect(reads).toEqual([1, 2, 3, 4]);
      expect(boldFonts.size).toBe(1);
    } finally {
      await pdf.destroy();
    }
  });
});
