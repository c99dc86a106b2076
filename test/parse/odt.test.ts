import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { odt } from "../formats/fixtures.ts";

describe("OpenDocument text (odt)", () => {
  it("gives headings by outline level, paragraphs, list items and tables, in document order", async () => {
    const output = await parseDocument(
      "odt",
      odt(
        [
          '<text:h text:outline-level="1">Delivery note</text:h>',
          '<text:p>Three parcels<text:s text:c="2"/>left<text:tab/>today.</text:p>',
          '<text:h text:outline-level="2">Parcels</text:h>',
          "<text:list><text:list-item><text:p>Bolts</text:p></text:list-item><text:list-item><text:p>Nuts</text:p></text:list-item></text:list>",
          "<table:table><table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Qty</text:p></table:table-cell></table:table-row>",
          "<table:table-row><table:table-cell><text:p>Bolts</text:p></table:table-cell><table:table-cell><text:p>40</text:p></table:table-cell></table:table-row></table:table>",
          "<text:p>Signed<office:annotation><text:p>a reviewer's note</text:p></office:annotation></text:p>",
        ].join(""),
      ),
    );
    expect(output.elements).toEqual([
      { type: "Title", text: "Delivery note", level: 1 },
      { type: "NarrativeText", text: "Three parcels  left\ttoday." },
      { type: "Title", text: "Parcels", level: 2 },
      { type: "ListItem", text: "Bolts" },
      { type: "ListItem", text: "Nuts" },
      expect.objectContaining({
        type: "Table",
        table: expect.objectContaining({
          rows: [
            ["Item", "Qty"],
            ["Bolts", "40"],
          ],
        }),
      }),
      expect.objectContaining({ text: "Signed" }),
    ]);
    expect(output.markdown).toContain("# Delivery note\n\nThree parcels  left\ttoday.\n\n## Parcels\n\n- Bolts\n- Nuts");
    expect(output.text).not.toContain("reviewer's note");
  });

  it("repeated spaces (text:s) make at most a megabyte in all: 800,000 tags of 1,000 spaces each are not 800 million characters", async () => {
    const output = await parseDocument("odt", odt(`<text:p>a${'<text:s text:c="1000"/>'.repeat(800_000)}b</text:p>`));
    // Before, the text passed V8's longest string and the document was refused as corrupt.
    expect(output.truncated).toBe(true);
    expect(output.text!.length).toBeLessThanOrEqual(1024 * 1024);
    expect(output.text!.startsWith(`a${" ".repeat(1000)}`)).toBe(true);
  });

  it("a package without content.xml, or nesting past the markup bound, fails as document_corrupt", async () => {
    await expect(parseDocument("odt", odt("<text:p>".repeat(600)))).rejects.toMatchObject({ code: "document_corrupt" });
  });
});
