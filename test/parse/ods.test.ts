import { describe, expect, it } from "vitest";
import { readOpenDocumentText } from "../../src/documents/parse/elements/odt.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { odt, ods } from "../formats/fixtures.ts";

const cell = (text: string, repeat = 1) =>
  `<table:table-cell${repeat > 1 ? ` table:number-columns-repeated="${repeat}"` : ""}>${text === "" ? "" : `<text:p>${text}</text:p>`}</table:table-cell>`;
const row = (...cells: string[]) => `<table:table-row>${cells.join("")}</table:table-row>`;
const sheet = (name: string, ...rows: string[]) => `<table:table table:name="${name}">${rows.join("")}</table:table>`;

describe("OpenDocument spreadsheet (ods)", () => {
  it("gives each sheet as a Title of its name and a Table of its cells, as an XLSX's sheets are, with the sheets' count and names", async () => {
    const output = await parseDocument(
      "ods",
      ods(
        [
          // LibreOffice fills each row to the sheet's last column with one empty cell repeated.
          sheet("Costs", row(cell("item"), cell("amount"), cell("", 1022)), row(cell("Bolts"), cell("40"), cell("", 1022)), row(cell("", 1024))),
          sheet("Empty", row(cell("", 1024))),
          sheet("Notes", row(cell(""), cell("checked by Ana"))),
        ].join(""),
      ),
    );
    expect(output).toMatchObject({ format: "ods", sheetCount: 3, sheetNames: ["Costs", "Empty", "Notes"] });
    expect(output.elements).toEqual([
      { type: "Title", text: "Costs", level: 1, page: 1 },
      expect.objectContaining({
        type: "Table",
        page: 1,
        text: "item\tamount\nBolts\t40",
        table: expect.objectContaining({
          sheet: "Costs",
          rows: [
            ["item", "amount"],
            ["Bolts", "40"],
          ],
        }),
      }),
      { type: "Title", text: "Empty", level: 1, page: 2 },
      { type: "Title", text: "Notes", level: 1, page: 3 },
      expect.objectContaining({ type: "Table", page: 3, table: expect.objectContaining({ sheet: "Notes", rows: [["", "checked by Ana"]] }) }),
    ]);
    expect(output.text).toBe("item\tamount\nBolts\t40\n\n\tchecked by Ana");
    expect(output.markdown).toContain("# Costs\n\n| item | amount |");
  });

  it("lists every sheet's name but reads the first 1,000 sheets' cells: 1,500 sheets stay a bounded output", async () => {
    const sheets = Array.from({ length: 1500 }, (_, index) => sheet(`S${index + 1}`, row(cell(`value ${index + 1}`)))).join("");
    const output = await parseDocument("ods", ods(sheets));
    expect(output.sheetCount).toBe(1500);
    expect(output.sheetNames).toHaveLength(1000);
    const titles = output.elements!.filter((element) => element.type === "Title");
    expect(titles.map((title) => title.text).slice(-1)).toEqual(["S1000"]);
    expect(output.text).toContain("value 1000");
    expect(output.text).not.toContain("value 1001");
  });

  it("a table in a cell is that cell's text, not a sheet", async () => {
    const inner = sheet("Inner", row(cell("nested")));
    const output = await parseDocument("ods", ods(sheet("Outer", row(`<table:table-cell>${inner}</table:table-cell>`, cell("beside")))));
    expect(output).toMatchObject({ sheetCount: 1, sheetNames: ["Outer"] });
    expect(output.text).toBe("nested\tbeside");
  });

  it("stops building tables once they hold the text the output keeps: 20 ragged sheets of 576 bytes are not 20 tables of a million cells", async () => {
    // Each sheet: a row of 999 empty cells then one with text (the table is 1,000 wide), then a
    // one-cell row repeated 1,000 times, each padded to that width. Before, 20 of them took 1.6 GB.
    const ragged = (index: number) =>
      sheet(`R${index}`, row(cell("", 999), cell("wide")), `<table:table-row table:number-rows-repeated="1000">${cell("x")}</table:table-row>`);
    const bytes = ods(Array.from({ length: 20 }, (_, index) => ragged(index + 1)).join(""));
    // The reader's own elements, before the output's bound: a table or two, not 20.
    const read = readOpenDocumentText(bytes, "spreadsheet");
    expect(read.sheetNames).toHaveLength(20);
    expect(read.elements.filter((element) => element.type === "Table").length).toBeLessThanOrEqual(2);
    expect(await parseDocument("ods", bytes)).toMatchObject({ sheetCount: 20, truncated: true });
  });

  it("a shape's text in a sheet follows that sheet's Title", async () => {
    const shape =
      "<table:shapes><draw:frame><draw:text-box><text:p>Checked by Ana on the third of November, before the totals were sent.</text:p></draw:text-box></draw:frame></table:shapes>";
    const output = await parseDocument("ods", ods(sheet("One", row(cell("a"))) + sheet("Two", shape, row(cell("b")))));
    expect(output.elements!.map((element) => [element.type, element.text])).toEqual([
      ["Title", "One"],
      ["Table", "a"],
      ["Title", "Two"],
      ["NarrativeText", "Checked by Ana on the third of November, before the totals were sent."],
      ["Table", "b"],
    ]);
  });

  it("an OpenDocument text that holds an office:spreadsheet element is still a text: its tables are not sheets", async () => {
    const output = await parseDocument("odt", odt(`<office:spreadsheet/>${sheet("Table1", row(cell("a"), cell("b")))}`));
    expect(output.sheetCount).toBeUndefined();
    expect(output.elements).toEqual([expect.objectContaining({ type: "Table", text: "a\tb", table: { rows: [["a", "b"]], html: expect.any(String) } })]);
  });
});
