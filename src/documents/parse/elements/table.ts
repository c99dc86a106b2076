import { escapeText } from "entities";
import { MAX_TEXT_BYTES } from "../text.ts";
import type { Element, ElementTable } from "./element.ts";

/**
 * The most cells a document's tables may hold that its markup does not write, all its tables
 * together (the cells written cost the document's bytes, these do not): the empty cells HTML spans
 * fill, the copies OpenDocument repeats make. Past it, a span or a repeat is read as one cell, so
 * that `<td colspan=1000 rowspan=65534>` and a run of `<tr>` can take neither time nor memory.
 */
export const MAX_SPANNED_CELLS = 1_000_000;

/**
 * One document's tables' share of what its output keeps (MAX_TEXT_BYTES of text and tables' HTML,
 * counted in order): once its tables hold that much, no more are built. A ragged table (one wide
 * row, many narrow ones) padded to its widest row is far larger than its markup, about a million
 * cells from 20 KB, and the output's bound would drop whatever comes after anyway; a reader makes
 * one per document.
 */
export class TableBudget {
  #left = MAX_TEXT_BYTES;

  /** tableElement of `rows`, or none once the document's tables hold MAX_TEXT_BYTES of text and HTML. */
  table(rows: string[][], extra: Parameters<typeof tableElement>[1] = {}): Element | undefined {
    if (this.#left <= 0) return undefined;
    const table = tableElement(rows, extra);
    // Its text and its HTML, as the output's bound counts them (UTF-16 units, at most as many as its UTF-8 bytes).
    this.#left -= table === undefined ? 0 : table.text.length + table.table!.html.length;
    return table;
  }
}

/**
 * A Table element of `rows` (rows padded to the widest, so every row has the same cells), or none
 * when no cell has text. Its text is the cells, tab-separated, one row a line; its HTML has one
 * `<tr>` per row, the first row's cells as `<th>`.
 */
export function tableElement(rows: string[][], extra: Omit<Element, "type" | "text" | "table"> & { sheet?: string } = {}): Element | undefined {
  const filled = rows.filter((row) => row.some((cell) => cell.trim() !== ""));
  if (filled.length === 0) return undefined;
  let width = 0;
  for (const row of filled) width = Math.max(width, row.length);
  // A ragged table (one wide row, many narrow ones) padded to rows x width cells could take far more
  // time and memory than the output holds. Each padded row's text is at least `width` bytes: rows
  // past those that already exceed MAX_TEXT_BYTES change nothing, as the output's bound drops a
  // table that large whole.
  const kept = Math.min(filled.length, Math.floor(MAX_TEXT_BYTES / width) + 2);
  const padded: string[][] = [];
  // Text and HTML are written as the rows are padded, in one pass (this runs for every table of every parse).
  let text = "";
  let html = "<table>";
  for (let index = 0; index < kept; index++) {
    const row = filled[index]!;
    const [open, close] = index === 0 ? ["<th>", "</th>"] : ["<td>", "</td>"];
    const cells: string[] = [];
    html += "<tr>";
    for (let column = 0; column < width; column++) {
      const cell = column < row.length ? row[column]!.trim() : "";
      cells.push(cell);
      html += open + escapeText(cell) + close;
    }
    html += "</tr>";
    text += index === 0 ? cells.join("\t") : `\n${cells.join("\t")}`;
    padded.push(cells);
  }
  html += "</table>";
  const { sheet, ...placement } = extra;
  const table: ElementTable = { rows: padded, html, ...(sheet === undefined ? {} : { sheet }) };
  return { type: "Table", text, ...placement, table };
}
