import { getDocumentProxy } from "unpdf";
import { describe, expect, it } from "vitest";
import { splitPdf } from "../../src/documents/split/split-pdf.ts";
import { blankPdf, textPdf } from "../support/pdfs.ts";

const nine = ["SEPARATOR Acme", "a1", "a2", "SEPARATOR Globex", "b1", "b2", "SEPARATOR Initech", "c1", "c2"];

/** Each page's text, as pdf.js reads it. */
async function pageTexts(bytes: Uint8Array): Promise<string[]> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const texts: string[] = [];
  for (let page = 1; page <= pdf.numPages; page++) {
    const { items } = await (await pdf.getPage(page)).getTextContent();
    texts.push(items.map((item) => ("str" in item ? item.str : "")).join(""));
  }
  await pdf.destroy();
  return texts;
}

describe("splitPdf", () => {
  it("cuts a 9-page PDF at each separator page into 3 PDFs holding those pages", async () => {
    const { pageCount, parts } = await splitPdf(await textPdf(nine), { pagesPerPart: 0, ranges: "", atText: "separator" }, 100);
    expect(pageCount).toBe(9);
    expect(parts.map(({ firstPage, lastPage, label }) => ({ firstPage, lastPage, label }))).toEqual([
      { firstPage: 1, lastPage: 3, label: "SEPARATOR Acme" },
      { firstPage: 4, lastPage: 6, label: "SEPARATOR Globex" },
      { firstPage: 7, lastPage: 9, label: "SEPARATOR Initech" },
    ]);
    expect(await pageTexts(parts[1]!.bytes)).toEqual(["SEPARATOR Globex", "b1", "b2"]);
  });

  it("refuses a 1,000-page PDF cut page by page past the 100-part limit, writing no part", async () => {
    await expect(splitPdf(await blankPdf(1_000), { pagesPerPart: 1, ranges: "", atText: "" }, 100)).rejects.toMatchObject({
      name: "SplitError",
      code: "split_too_many_parts",
    });
  });

  it("a file that is not a PDF fails as document_corrupt", async () => {
    await expect(splitPdf(Buffer.from("%PDF-1.7 not really"), { pagesPerPart: 1, ranges: "", atText: "" }, 100)).rejects.toMatchObject({
      name: "ParseError",
      code: "document_corrupt",
    });
  });
});
