import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { docxOfBody } from "./samples.ts";

describe("DOCX: a text box anchored in a paragraph", () => {
  // Word anchors a floating text box (a sidebar, a callout) in a run of the paragraph it sits beside,
  // usually at the paragraph's start, so the box's own <w:p> is nested inside the heading's <w:p>.
  const box = (text: string) =>
    '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><a:graphic><a:graphicData><wps:wsp><wps:txbx><w:txbxContent>'
    + `<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`
    + "</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
    + `<mc:Fallback><w:pict><v:textbox><w:txbxContent><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:txbxContent></v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r>`;
  const body =
    `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr>${box("Sidebar: figures are unaudited")}<w:r><w:t>Quarterly results</w:t></w:r></w:p>`
    + "<w:p><w:r><w:t>Revenue grew this quarter across all regions, as the table below shows.</w:t></w:r></w:p>";

  it("keeps the heading a Title of its level, and does not make the box's text the heading", async () => {
    const output = await parseDocument("docx", docxOfBody(body));
    // Today: [Title "Sidebar: figures are unaudited" (level 1), NarrativeText "Quarterly results", ...]:
    // the box's </w:p> ends the heading's paragraph, which hands it the heading's style.
    expect(output.elements).toContainEqual({ type: "Title", text: "Quarterly results", level: 1 });
    expect(output.elements).not.toContainEqual(expect.objectContaining({ type: "Title", text: "Sidebar: figures are unaudited" }));
    expect(output.markdown).toContain("# Quarterly results");
  });

  it("puts the box's paragraphs after the heading, typed by their own style", async () => {
    const output = await parseDocument("docx", docxOfBody(body));
    expect(output.elements?.slice(0, 2)).toEqual([
      { type: "Title", text: "Quarterly results", level: 1 },
      { type: "NarrativeText", text: "Sidebar: figures are unaudited" },
    ]);
    expect(output.text?.startsWith("Quarterly results\n\nSidebar: figures are unaudited\n\nRevenue grew")).toBe(true);
  });

  it("reads paragraphs nested past its limit as part of the one holding them", async () => {
    const depth = 1000;
    const nested = `${"<w:p><w:r><w:t>x</w:t></w:r>".repeat(depth)}${"</w:p>".repeat(depth)}<w:p><w:r><w:t>after</w:t></w:r></w:p>`;
    const output = await parseDocument("docx", docxOfBody(nested));
    expect(output.text?.match(/x/g)).toHaveLength(depth);
    expect(output.elements?.length).toBeLessThanOrEqual(10);
    expect(output.elements?.at(-1)?.text).toBe("after");
  });
});
