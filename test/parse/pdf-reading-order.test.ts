import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { pagesInReadingOrder } from "../../src/documents/parse/ocr-pages.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

/** A two-column page drawn right column first: the text layer starts with the right column. */
async function rightColumnFirstPdf(): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const page = pdf.addPage([595, 842]);
  const column = (x: number, lines: string[]) => lines.forEach((line, index) => page.drawText(line, { x, y: 700 - index * 14, size: 10, font }));
  column(330, ["The right column is drawn first, yet", "it is read after the whole left one."]);
  column(72, ["The left column starts the story and", "goes on for a second line of text."]);
  return Buffer.from(await pdf.save());
}

describe("a PDF's text", () => {
  it("follows the elements' reading order, not the order the page draws its runs in", async () => {
    const output = await parseDocument("pdf", await rightColumnFirstPdf());
    const left = "The left column starts the story and goes on for a second line of text.";
    const right = "The right column is drawn first, yet it is read after the whole left one.";
    expect(output.elements?.map((element) => element.text)).toEqual([left, right]);
    // Within a paragraph the lines stay as the page draws them; the paragraphs come in reading order.
    const leftLines = "The left column starts the story and\ngoes on for a second line of text.";
    const rightLines = "The right column is drawn first, yet\nit is read after the whole left one.";
    expect(output.text).toBe(`${leftLines}\n\n${rightLines}`);
    expect(output.pages?.map((page) => page.text)).toEqual([`${leftLines}\n\n${rightLines}`]);
  });

  it("of OCR'd pages is their elements' text too, page by page", () => {
    const pages = [
      { page: 1, text: "engine order: B then A", ocr: true, confidence: 90 },
      { page: 2, text: "", ocr: true, confidence: 0 },
    ];
    const elements = [
      { type: "Title" as const, text: "A", page: 1 },
      { type: "NarrativeText" as const, text: "B", page: 1 },
    ];
    expect(pagesInReadingOrder(pages, elements)).toEqual([
      { page: 1, text: "A\n\nB", ocr: true, confidence: 90 },
      { page: 2, text: "", ocr: true, confidence: 0 },
    ]);
  });
});
