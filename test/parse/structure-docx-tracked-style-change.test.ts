import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/parse/parse-document.ts";
import { docxOfBody } from "./samples.ts";

describe("DOCX: a tracked change of a paragraph's style", () => {
  it("types the paragraph by its current style, not by the one the change record keeps", async () => {
    // With Track Changes on, restyling "Scope of work" from Normal to Heading 1 keeps the old
    // properties in <w:pPrChange><w:pPr>, after the current ones.
    const output = await parseDocument(
      "docx",
      docxOfBody(
        '<w:p><w:pPr><w:pStyle w:val="Heading1"/><w:pPrChange w:id="1" w:author="Ann" w:date="2026-01-01T00:00:00Z"><w:pPr><w:pStyle w:val="Normal"/></w:pPr></w:pPrChange></w:pPr><w:r><w:t>Scope of work</w:t></w:r></w:p>'
          + "<w:p><w:r><w:t>The contractor delivers the items listed below by the end of the year.</w:t></w:r></w:p>",
      ),
    );
    // Today: NarrativeText "Scope of work" (the old style, read last, wins).
    expect(output.elements?.[0]).toEqual({ type: "Title", text: "Scope of work", level: 1 });
  });
});
