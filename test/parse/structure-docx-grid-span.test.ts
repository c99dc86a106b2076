import { describe, expect, it } from "vitest";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { docxOfBody } from "./samples.ts";

const cell = (text: string, properties = "") =>
  `<w:tc>${properties === "" ? "" : `<w:tcPr>${properties}</w:tcPr>`}<w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:tc>`;
const row = (...cells: string[]) => `<w:tr>${cells.join("")}</w:tr>`;

describe("DOCX: merged table cells", () => {
  it("keeps a cell after a horizontally merged one (gridSpan) under its column", async () => {
    const table =
      "<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/><w:gridCol/><w:gridCol/></w:tblGrid>"
      + row(cell("Item"), cell("Q1"), cell("Q2"), cell("Total"))
      + row(cell("Bolts"), cell("sold out", '<w:gridSpan w:val="2"/>'), cell("0"))
      + row(cell("Nuts"), cell("5"), cell("7"), cell("12"))
      + "</w:tbl>";
    const output = await parseDocument("docx", docxOfBody(table));
    const rows = output.elements?.find((element) => element.type === "Table")?.table?.rows ?? [];
    // Today the Bolts row is ["Bolts", "sold out", "0", ""]: its total sits under Q2.
    expect(rows[1]![0]).toBe("Bolts");
    expect(rows[1]![1]).toBe("sold out");
    expect(rows[1]![3]).toBe("0");
    expect(rows[1]![2]).not.toBe("0");
  });

  it("caps a hostile span at Word's widest table (63 columns)", async () => {
    const table = `<w:tbl>${row(cell("a", '<w:gridSpan w:val="1000000000"/>'), cell("b"))}${row(cell("c", '<w:gridSpan w:val="-5"/>'), cell("d"))}</w:tbl>`;
    const output = await parseDocument("docx", docxOfBody(table));
    const rows = output.elements?.find((element) => element.type === "Table")?.table?.rows ?? [];
    expect(rows[0]).toHaveLength(64);
    expect(rows[0]![63]).toBe("b");
    expect(rows[1]!.slice(0, 2)).toEqual(["c", "d"]);
  });
});
