import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: block elements inside a table cell", () => {
  it("separates the words of a cell's paragraphs, divs and nested table cells", async () => {
    // Minified HTML, as generators and e-mail clients write it: no whitespace between tags.
    const output = await parseDocument(
      "html",
      Buffer.from(
        "<table><tr><th>Name</th><th>Notes</th></tr>"
          + "<tr><td>Ann</td><td><p>First point.</p><p>Second point.</p></td></tr>"
          + "<tr><td>Bob</td><td><div>Line one</div><div>Line two</div></td></tr>"
          + "<tr><td>Cy</td><td><table><tr><td>Width</td><td>Height</td></tr></table></td></tr></table>",
      ),
    );
    const rows = output.elements?.find((element) => element.type === "Table")?.table?.rows;
    // Today: "First point.Second point.", "Line oneLine two", "WidthHeight".
    expect(rows?.[1]?.[1]).toMatch(/^First point\.\s+Second point\.$/);
    expect(rows?.[2]?.[1]).toMatch(/^Line one\s+Line two$/);
    expect(rows?.[3]?.[1]).toMatch(/^Width\s+Height$/);
  });

  it("keeps a cell's lines apart: a <br>, its paragraphs and a nested table's rows are line breaks, the source's own line breaks are spaces", async () => {
    const output = await parseDocument(
      "html",
      Buffer.from(
        "<table><tr><td>Kunde: Nordwind AG<br>Hafenstraße 4</td><td><p>First</p><p>Second</p></td>"
          + "<td><table><tr><td>ACME</td><td>GmbH</td></tr><tr><td>Berlin</td></tr></table></td><td>one\n   cell</td></tr></table>",
      ),
    );
    const rows = output.elements?.find((element) => element.type === "Table")?.table?.rows;
    // Before: "Kunde: Nordwind AG Hafenstraße 4", "First Second", "ACME GmbH Berlin".
    expect(rows).toEqual([["Kunde: Nordwind AG\nHafenstraße 4", "First\nSecond", "ACME GmbH\nBerlin", "one cell"]]);
  });
});
