import type { BoundingBox } from "../../../documents/parse/elements/element.ts";
import type { ParsedDocument } from "../run-data.ts";

/** A table as a grid of cell texts, the first row its header, with the page it is on and its box when the parse placed it. */
export interface Table {
  page: number;
  rows: string[][];
  box?: BoundingBox;
}

/** Cells of a text line: columns are set apart by a tab or by two or more spaces. */
const CELL_GAP = /\t+| {2,}/;

function lineCells(line: string): string[] {
  return line
    .trim()
    .split(CELL_GAP)
    .map((cell) => cell.trim())
    .filter((cell) => cell !== "");
}

/**
 * The document's tables: its Table elements when the parse produced them, else runs of two or more
 * text lines that split into the same number (at least two) of cells: columns set with tabs or
 * runs of spaces, as word processors and plain-text reports lay them out. (A PDF's text layer has
 * lost its column gaps; its tables come from structured elements.)
 */
export function documentTables(document: ParsedDocument): Table[] {
  const fromElements = document.elements
    .filter((element) => element.type === "Table" && element.table !== undefined)
    .map((element): Table => ({ page: element.page ?? 1, rows: element.table!.rows, ...(element.bbox === undefined ? {} : { box: element.bbox }) }))
    .filter((table) => table.rows.length > 0);
  if (fromElements.length > 0) return fromElements;
  const tables: Table[] = [];
  for (const { page, text } of document.pages) {
    let rows: string[][] = [];
    for (const line of [...text.split("\n"), "end"]) {
      // Blank lines do not end a table: word processors put one between paragraphs.
      if (line.trim() === "") continue;
      const cells = lineCells(line);
      if (cells.length >= 2 && (rows.length === 0 || cells.length === rows[0]!.length)) {
        rows.push(cells);
        continue;
      }
      if (rows.length >= 2) tables.push({ page, rows });
      rows = cells.length >= 2 ? [cells] : [];
    }
  }
  return tables;
}
