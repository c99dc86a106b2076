import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";

describe("HTML: a table's <caption>", () => {
  it("is kept in the elements (html.ts maps caption to FigureCaption)", async () => {
    const output = await parseDocument(
      "html",
      Buffer.from("<table><caption>Table 1: Revenue by year</caption><tr><th>Year</th><th>Revenue</th></tr><tr><td>2023</td><td>10</td></tr></table>"),
    );
    expect(output.text).toContain("Table 1: Revenue by year");
    // Today the caption is in `text` but in no element, so neither the Markdown nor any chunk has it.
    expect(output.elements).toContainEqual({ type: "FigureCaption", text: "Table 1: Revenue by year" });
    expect(output.elements?.map((element) => element.type)).toEqual(["FigureCaption", "Table"]);
    expect(output.markdown).toContain("Table 1: Revenue by year");
  });
});
