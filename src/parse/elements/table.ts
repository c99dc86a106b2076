import { escapeText } from "entities";
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
  const kept = rows.filter((row) => row.some((cell) => cell.trim() !== ""));
  if (kept.length === 0) return undefined;
  const width = Math.max(...kept.map((row) => row.length));
  const padded = kept.map((row) => {
    const cells = row.map((cell) => cell.trim());
    while (cells.length < width) cells.push("");
    return cells;
  });
  const { sheet, ...placement } = extra;
  const table: ElementTable = { rows: padded, html: tableHtml(padded), ...(sheet === undefined ? {} : { sheet }) };
  return { type: "Table", text: padded.map((row) => row.join("\t")).join("\n"), ...placement, table };
}
