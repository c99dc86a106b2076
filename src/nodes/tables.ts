import { Parser } from "htmlparser2";
import type { ParsedDocument } from "./run-data.ts";

/** A table as a grid of cell texts, the first row its header, with the page it is on. */
export interface Table {
  page: number;
  rows: string[][];
}

/** Cells of a text line: columns are set apart by a tab or by two or more spaces. */
const CELL_GAP = /\t+| {2,}/;

export function lineCells(line: string): string[] {
  return line
    .trim()
    .split(CELL_GAP)
    .map((cell) => cell.trim())
    .filter((cell) => cell !== "");
}

/** The rows of an HTML table (an element's text_as_html), each a list of cell texts. */
function htmlTableRows(html: string): string[][] {
  const rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string | undefined;
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === "tr") row = [];
        else if ((name === "td" || name === "th") && row !== undefined) cell = "";
      },
      ontext(text) {
        if (cell !== undefined) cell += text;
      },
      onclosetag(name) {
        if ((name === "td" || name === "th") && row !== undefined && cell !== undefined) {
          row.push(cell.replace(/\s+/g, " ").trim());
          cell = undefined;
        } else if (name === "tr" && row !== undefined) {
          if (row.length > 0) rows.push(row);
          row = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return rows;
}

/**
 * The document's tables: its Table elements when the parse produced them, else runs of two or more
 * text lines that split into the same number (at least two) of cells: columns set with tabs or
 * runs of spaces, as word processors and plain-text reports lay them out. (A PDF's text layer has
 * lost its column gaps; its tables come from structured elements.)
 */
export function documentTables(document: ParsedDocument): Table[] {
  const fromElements = document.elements
    .filter((element) => element.type === "Table" && typeof element.metadata?.text_as_html === "string")
    .map((element) => ({ page: element.metadata?.page_number ?? 1, rows: htmlTableRows(element.metadata!.text_as_html!) }))
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
