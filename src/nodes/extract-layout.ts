import type { ParsedDocument } from "./run-data.ts";

/** Where a text is on its page: the body, or the page's margins (headers, footers, page numbers). */
export type Region = "body" | "margin";

/** `[x0, y0, x1, y1]` from the page's top-left corner, as the parse gives it. */
export type Box = [number, number, number, number];

/** Element types that are page furniture: searched after the body. */
const MARGIN_TYPES = new Set(["Header", "Footer", "PageNumber"]);

/**
 * A cell of a row: a table's cell, or a column of a text line. `from` and `to` place it among the
 * row's columns: cell indexes for tables and tab-set lines, character offsets for lines set with
 * runs of spaces, so that a cell below is the one that overlaps it.
 */
export interface LayoutCell {
  lines: string[];
  from: number;
  to: number;
  /** How `from` and `to` count: cell indexes, or characters. */
  columns: "index" | "characters";
}

/** A row the reading model walks: a table's row, or a text line split into its columns. */
export interface LayoutRow {
  page: number;
  region: Region;
  /** Whether the row is a table's (its cells are a table's cells) or a text line's. */
  place: "cell" | "line";
  cells: LayoutCell[];
  /** The next row below this one: the table's next row, or the next line that is not blank. */
  below: LayoutRow | undefined;
  /** The box of the table the row is in, when the parse gave one. */
  box?: Box;
}

/** Column gaps in a text line: a tab, two or more spaces, or a separator set apart by spaces ("Bank | IBAN", "a · b"). */
const SPACE_GAP = / {2,}|\s+[|·•]\s+/g;

/** A text line's cells: tab-separated (cells counted by index), else set apart by runs of spaces (counted by character). */
export function textLineCells(line: string): LayoutCell[] {
  if (line.includes("\t")) {
    return line
      .split("\t")
      .map((text, index) => ({ lines: [text.trim()], from: index, to: index + 1, columns: "index" as const }))
      .filter((cell) => cell.lines[0] !== "");
  }
  const cells: LayoutCell[] = [];
  let start = 0;
  const push = (end: number) => {
    const text = line.slice(start, end);
    const trimmed = text.trim();
    if (trimmed !== "") {
      const from = start + text.indexOf(trimmed);
      cells.push({ lines: [trimmed], from, to: from + trimmed.length, columns: "characters" });
    }
  };
  for (const gap of line.matchAll(SPACE_GAP)) {
    push(gap.index);
    start = gap.index + gap[0].length;
  }
  push(line.length);
  return cells;
}

/** Whether `below` is under `cell`: the same column index, or overlapping characters; across kinds, the same place among the row's cells. */
export function isUnder(cell: LayoutCell, cellIndex: number, below: LayoutCell, belowIndex: number): boolean {
  if (cell.columns !== below.columns) return cellIndex === belowIndex;
  return cell.columns === "index" ? cell.from === below.from : below.from < cell.to && cell.from < below.to;
}

/** Rows of text lines, each linked to the next line that is not blank. */
function lineRows(text: string, page: number, region: Region): LayoutRow[] {
  const rows: LayoutRow[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const row: LayoutRow = { page, region, place: "line", cells: textLineCells(line), below: undefined };
    const previous = rows.at(-1);
    if (previous !== undefined) previous.below = row;
    rows.push(row);
  }
  return rows;
}

/**
 * The rows a document is read in, body first: its Table elements' rows, then its pages' text lines,
 * then its headers' and footers' lines. A table cell keeps its lines (a DOCX cell's paragraphs and
 * line breaks, an HTML cell's `<br>`s), so a value runs to the end of its line, not of its cell.
 */
export function documentRows(document: ParsedDocument): LayoutRow[] {
  const tables: LayoutRow[] = [];
  const margins: LayoutRow[] = [];
  for (const element of document.elements) {
    const page = element.page ?? 1;
    if (element.type === "Table" && element.table !== undefined) {
      const rows = element.table.rows.map(
        (cells): LayoutRow => ({
          page,
          region: "body",
          place: "cell",
          cells: cells.map((cell, index) => ({ lines: cell.split("\n").map((line) => line.trim()), from: index, to: index + 1, columns: "index" })),
          below: undefined,
          ...(element.bbox === undefined ? {} : { box: element.bbox }),
        }),
      );
      rows.forEach((row, index) => {
        row.below = rows[index + 1];
      });
      tables.push(...rows);
    } else if (MARGIN_TYPES.has(element.type)) margins.push(...lineRows(element.text, page, "margin"));
  }
  const lines = document.pages.flatMap(({ page, text }) => lineRows(text, page, "body"));
  return [...tables, ...lines, ...margins];
}

/** The box of the element a body line on `page` came from, when the parse gave one: looked up for a found value only. */
export function lineBox(document: ParsedDocument, page: number, line: string): Box | undefined {
  const text = line.trim();
  return document.elements.find((element) => (element.page ?? 1) === page && element.bbox !== undefined && element.text.includes(text))?.bbox;
}
