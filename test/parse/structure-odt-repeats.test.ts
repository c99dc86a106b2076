import { describe, expect, it } from "vitest";
import { readOpenDocumentText } from "../../src/documents/parse/elements/odt.ts";
import { parseDocument } from "../../src/documents/parse/parse-document.ts";
import { MAX_TEXT_BYTES } from "../../src/documents/parse/text.ts";
import { odt } from "../formats/fixtures.ts";

const p = (text: string) => `<text:p>${text}</text:p>`;
/** A cell of `text` (none: empty), with its attributes (`number-columns-repeated="3"`: `table:` is added). */
const cell = (text?: string, attributes = "") =>
  `<table:table-cell${attributes === "" ? "" : ` table:${attributes}`}>${text === undefined ? "" : p(text)}</table:table-cell>`;
const covered = (attributes = "") => `<table:covered-table-cell${attributes === "" ? "" : ` table:${attributes}`}/>`;
const row = (cells: string[], attributes = "") => `<table:table-row${attributes === "" ? "" : ` table:${attributes}`}>${cells.join("")}</table:table-row>`;
const table = (...rows: string[]) => `<table:table>${rows.join("")}</table:table>`;

/** The rows of each Table the ODT `body` parses to. */
async function tables(body: string): Promise<string[][][]> {
  const output = await parseDocument("odt", odt(body));
  return (output.elements ?? []).filter((element) => element.type === "Table").map((element) => element.table!.rows);
}

describe("ODT/ODS tables: repeated cells and rows, covered cells", () => {
  it("places a repeated cell in as many columns, and a repeated row as many times, as they repeat", async () => {
    const body = table(
      row([cell("Item"), cell("Q", 'number-columns-repeated="3"'), cell("Total")]),
      row([cell("Bolts"), cell(undefined, 'number-columns-repeated="2"'), cell("4"), cell("9")], 'number-rows-repeated="2"'),
      row([cell("Nuts"), cell("1"), cell("2"), cell("3"), cell("6")]),
    );
    // Before: a repeated cell was one column and a repeated row one row ([Item, Q, Total], [Bolts, "", 4, 9], ...).
    expect(await tables(body)).toEqual([
      [
        ["Item", "Q", "Q", "Q", "Total"],
        ["Bolts", "", "", "4", "9"],
        ["Bolts", "", "", "4", "9"],
        ["Nuts", "1", "2", "3", "6"],
      ],
    ]);
  });

  it("keeps columns aligned under a merged cell: each covered cell is an empty cell, its hidden text left out", async () => {
    const body = table(
      row([cell("Merged", 'number-columns-spanned="2" table:number-rows-spanned="2"'), covered(), cell("C")]),
      row([covered('number-columns-repeated="2"'), cell("D")]),
      row([cell("e"), `<table:covered-table-cell>${p("hidden")}</table:covered-table-cell>`, cell("g")]),
    );
    // Before: covered cells were skipped, "C" and "D" moved left a column or two, and "hidden" was a paragraph of its own.
    expect(await tables(body)).toEqual([
      [
        ["Merged", "", "C"],
        ["", "", "D"],
        ["e", "", "g"],
      ],
    ]);
    expect((await parseDocument("odt", odt(body))).text).not.toContain("hidden");
  });

  it("drops the empty cells and rows that fill a sheet, and bounds repeats: a sheet's worth of them takes neither time nor memory", async () => {
    const started = performance.now();
    // As a spreadsheet writes a sheet: each row filled to column 16,384 by an empty cell, then 1,048,574 empty rows.
    const sheet = table(
      row([cell("a"), cell("b"), cell(undefined, 'number-columns-repeated="16382"')]),
      row([cell(undefined, 'number-columns-repeated="2"'), cell("c"), cell(undefined, 'number-columns-repeated="16381"')]),
      row([cell(undefined, 'number-columns-repeated="16384"')], 'number-rows-repeated="1048574"'),
    );
    expect(await tables(sheet)).toEqual([
      [
        ["a", "b", ""],
        ["", "", "c"],
      ],
    ]);
    // Text in every cell of 16,384 columns and 1,048,576 rows, in 100 tables: 1.7e12 cells were the repeats made.
    const hostile = table(row([cell("x", 'number-columns-repeated="16384"')], 'number-rows-repeated="1048576"')).repeat(100);
    // The reader's own elements: it stops building tables once they hold the megabyte of text the
    // output keeps (parseDocument keeps 5 of them here).
    const tablesRead = readOpenDocumentText(odt(hostile)).elements.filter((element) => element.type === "Table");
    const read = tablesRead.map((element) => element.table!.rows);
    expect(read.length).toBeLessThan(100);
    const text = tablesRead.reduce((total, element) => total + element.text.length, 0);
    expect(text - tablesRead.at(-1)!.text.length).toBeLessThan(MAX_TEXT_BYTES);
    const cells = read.reduce((total, rows) => total + rows.reduce((sum, cells) => sum + cells.length, 0), 0);
    // At most the budget of cells repeats may add (MAX_SPANNED_CELLS, HTML's for spans) beyond those written.
    expect(cells).toBeLessThanOrEqual(1_000_000 + 100);
    expect(read[0]).toEqual([Array(16_384).fill("x")]);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("bounds the text repeats copy too: one long cell repeated a million times, down or across, stays one cell", () => {
    // Few cells but 500 MB of text, where the output keeps 1 MB: past MAX_TEXT_BYTES a repeat counts once.
    const long = "y".repeat(500);
    const read = readOpenDocumentText(
      odt(`${table(row([cell(long)], 'number-rows-repeated="1000000"'))}${table(row([cell(long, 'number-columns-repeated="1000000"')]))}`),
    );
    expect(read.elements.map((element) => element.table?.rows)).toEqual([[[long]], [[long]]]);
  });
});
