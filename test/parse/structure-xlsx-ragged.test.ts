import { describe, expect, it } from "vitest";
import { workbookElements } from "../../src/parse/elements/spreadsheet.ts";

describe("XLSX: ragged sheets", () => {
  it("stops building tables once they hold the text the output keeps: 20 ragged sheets are not 20 tables of a million cells", () => {
    // Each sheet: one cell in column 1,000, then 1,000 rows of one cell, each padded to that width.
    // Before, each sheet's table was built whole, about a million cells and 9 MB of HTML apiece.
    const ragged = [[...Array<string>(999).fill(""), "wide"], ...Array.from({ length: 1000 }, () => ["x"])];
    const sheets = Array.from({ length: 20 }, (_, index) => ({ number: index + 1, name: `R${index + 1}`, rows: ragged }));
    const elements = workbookElements(sheets);
    expect(elements.filter((element) => element.type === "Title")).toHaveLength(20);
    expect(elements.filter((element) => element.type === "Table").length).toBeLessThanOrEqual(2);
  });
});
