import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { closeOcr } from "../../src/documents/parse/ocr.ts";
import { tiffPageCount } from "../../src/documents/parse/tiff.ts";
import { splitPdf } from "../../src/documents/split/split-pdf.ts";
import { splitTiff } from "../../src/documents/split/split-tiff.ts";
import { pdfOf, textTiff } from "../parse/ocr-samples.ts";

afterAll(closeOcr);

const shape = (parts: { firstPage: number; lastPage: number; label: string }[]) =>
  parts.map(({ firstPage, lastPage, label }) => ({ firstPage, lastPage, label }));

describe("splitTiff", () => {
  it("cuts a 5-page TIFF every 2 pages into multi-page TIFFs of those pages, their resolution kept", async () => {
    const tiff = await sharp(await textTiff([["one"], ["two"], ["three"], ["four"], ["five"]]), { pages: -1 })
      .withMetadata({ density: 300 })
      .tiff({ compression: "lzw" })
      .toBuffer();
    const { pageCount, parts } = await splitTiff(tiff, { pagesPerPart: 2, ranges: "", atText: "" }, 100);
    expect(pageCount).toBe(5);
    expect(shape(parts)).toEqual([
      { firstPage: 1, lastPage: 2, label: "pages 1-2" },
      { firstPage: 3, lastPage: 4, label: "pages 3-4" },
      { firstPage: 5, lastPage: 5, label: "page 5" },
    ]);
    expect(parts.map((part) => tiffPageCount(part.bytes))).toEqual([2, 2, 1]);
    expect(await sharp(parts[1]!.bytes).metadata()).toMatchObject({ format: "tiff", pages: 2, density: 300 });
    // The part's second page is the document's fourth: the same pixels.
    const fourth = await sharp(tiff, { page: 3 }).raw().toBuffer();
    expect((await sharp(parts[1]!.bytes, { page: 1 }).raw().toBuffer()).equals(fourth)).toBe(true);
  });

  it("cuts a scanned bundle at each separator sheet, reading the pages by OCR", async () => {
    const bundle = await textTiff([["SEPARATOR Acme"], ["Invoice for Acme"], ["SEPARATOR Globex"], ["Letter to Globex"]]);
    const { pageCount, parts } = await splitTiff(bundle, { pagesPerPart: 0, ranges: "", atText: "separator" }, 100);
    expect(pageCount).toBe(4);
    expect(shape(parts)).toEqual([
      { firstPage: 1, lastPage: 2, label: "SEPARATOR Acme" },
      { firstPage: 3, lastPage: 4, label: "SEPARATOR Globex" },
    ]);
  }, 60_000);

  it("a range past the last page fails as split_pages_out_of_range; a damaged file as document_corrupt", async () => {
    const tiff = await textTiff([["one"], ["two"]]);
    await expect(splitTiff(tiff, { pagesPerPart: 0, ranges: "1,2-3", atText: "" }, 100)).rejects.toMatchObject({ code: "split_pages_out_of_range" });
    await expect(splitTiff(tiff.subarray(0, 200), { pagesPerPart: 1, ranges: "", atText: "" }, 100)).rejects.toMatchObject({
      name: "ParseError",
      code: "document_corrupt",
    });
  });
});

describe("splitPdf of a scanned PDF", () => {
  it("reads a page without a text layer by OCR to find the separator sheets", async () => {
    const pdf = await pdfOf([{ scan: ["SEPARATOR Acme"] }, { text: "Acme page 2" }, { scan: ["SEPARATOR Globex"] }]);
    const { parts } = await splitPdf(pdf, { pagesPerPart: 0, ranges: "", atText: "separator" }, 100);
    expect(shape(parts)).toEqual([
      { firstPage: 1, lastPage: 2, label: "SEPARATOR Acme" },
      { firstPage: 3, lastPage: 3, label: "SEPARATOR Globex" },
    ]);
  }, 60_000);
});
