import { escapeText } from "entities";
import { MAX_TEXT_BYTES } from "../text.ts";
import type { Element, ElementTable } from "./element.ts";

/** A table's HTML: one `<tr>` per row, the first row's cells as `<th>` when `header` is set. */
function tableHtml(rows: readonly (readonly string[])[], header = true): string {
  const body = rows.map((row, index) => {
    const tag = header && index === 0 ? "th" : "td";
    return `<tr>${row.map((cell) => `<${tag}>${escapeText(cell)}</${tag}>`).join("")}</tr>`;
  });
  return `<table>${body.join("")}</table>`;
}

/**
 * A Table element of `rows` (rows padded to the widest, so every row has the same cells), or none
 * when no cell has text. Its text is the cells, tab-separated, one row a line.
 */
export function tableElement(rows: string[][], extra: Omit<Element, "type" | "text" | "table"> & { sheet?: string } = {}): Element | undefined {
  const filled = rows.filter((row) => row.some((cell) => cell.trim() !== ""));
  if (filled.length === 0) return undefined;
  const width = filled.reduce((widest, row) => Math.max(widest, row.length), 0);
  // A ragged table (one wide row, many narrow ones) padded to rows x width cells could take far more
  // time and memory than the output holds. Each padded row's text is at least `width` bytes: rows
  // past those that already exceed MAX_TEXT_BYTES change nothing, as the output's bound drops a
  // table that large whole.
  const kept = filled.slice(0, Math.floor(MAX_TEXT_BYTES / width) + 2);
  const padded = kept.map((row) => {
    const cells = row.map((cell) => cell.trim());
    while (cells.length < width) cells.push("");
    return cells;
  });
  const { sheet, ...placement } = extra;
  const table: ElementTable = { rows: padded, html: tableHtml(padded), ...(sheet === undefined ? {} : { sheet }) };
  return { type: "Table", text: padded.map((row) => row.join("\t")).join("\n"), ...placement, table };
}
