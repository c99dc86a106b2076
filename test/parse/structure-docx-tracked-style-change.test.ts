import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
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

  it("reads a style by its current properties, not by the old ones a tracked change of the style keeps in styles.xml", async () => {
    // "Clause" was a heading (outline level 1) and a numbered list style; with Track Changes on, it
    // became a plain style: the old outline level and numbering stay in <w:pPrChange>, after the current ones.
    const clause =
      '<w:style w:type="paragraph" w:styleId="Clause"><w:name w:val="Clause"/><w:pPr><w:outlineLvl w:val="9"/>'
      + '<w:pPrChange w:id="2" w:author="Ann" w:date="2026-01-01T00:00:00Z"><w:pPr><w:numPr><w:numId w:val="3"/></w:numPr><w:outlineLvl w:val="0"/></w:pPr></w:pPrChange></w:pPr></w:style>';
    const heading = '<w:style w:type="paragraph" w:styleId="Part"><w:name w:val="Part"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>';
    const output = await parseDocument(
      "docx",
      docxOfBody(
        '<w:p><w:pPr><w:pStyle w:val="Part"/></w:pPr><w:r><w:t>Terms</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Clause"/></w:pPr><w:r><w:t>The contractor delivers by the end of the year.</w:t></w:r></w:p>',
        clause + heading,
      ),
    );
    expect(output.elements).toEqual([
      { type: "Title", text: "Terms", level: 2 },
      { type: "NarrativeText", text: "The contractor delivers by the end of the year." },
    ]);
  });
});
