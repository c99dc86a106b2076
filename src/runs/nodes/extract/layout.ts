import { type BoundingBox, FURNITURE } from "../../../documents/parse/elements/element.ts";
import { PageLines } from "../../../documents/parse/page-lines.ts";
import type { ParsedDocument } from "../run-data.ts";

/** Where a text is on its page: the body, or the page's margins (headers, footers, page numbers). */
export type Region = "body" | "margin";

/** Element types that are page furniture, by name: searched after the body. */
const MARGIN_TYPES: ReadonlySet<string> = FURNITURE;

/**
 * A cell of a row: a table's cell, a column of a text line, or a placed element of a page. `from`
 * and `to` place it among the row's columns: cell indexes for tables and tab-set lines, character
 * offsets for lines set with runs of spaces, points across the page for placed elements, so that
 * a cell below is the one that overlaps it.
 */
export interface LayoutCell {
  lines: string[];
  from: number;
  to: number;
  /** How `from` and `to` count: cell indexes, or an extent (characters, or points). */
  columns: "index" | "extent";
  /** A placed element's box. */
  box?: BoundingBox;
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
  /** The box of the row's table, when the parse gave one. */
  box?: BoundingBox;
}

/** Column gaps in a text line: a tab, two or more spaces, or a separator set apart by spaces ("Bank | IBAN", "a · b"). */
const SPACE_GAP = / {2,}|\s+[|·•]\s+/g;

/** A text line's cells: tab-separated (cells counted by index), else set apart by runs of spaces (counted by character). */
function textLineCells(line: string): LayoutCell[] {
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
      cells.push({ lines: [trimmed], from, to: from + trimmed.length, columns: "extent" });
    }
  };
  for (const gap of line.matchAll(SPACE_GAP)) {
    push(gap.index);
    start = gap.index + gap[0].length;
  }
  push(line.length);
  return cells;
}

/** Whether `below` is under `cell`: the same column index, or overlapping extents; across kinds, the same place among the row's cells. */
function isUnder(cell: LayoutCell, cellIndex: number, below: LayoutCell, belowIndex: number): boolean {
  if (cell.columns !== below.columns) return cellIndex === belowIndex;
  return cell.columns === "index" ? cell.from === below.from : below.from < cell.to && cell.from < below.to;
}

/**
 * The index of the cell in `below` that is under `row`'s cell `index` (the first that overlaps it),
 * or -1: a row's cells are in order and apart, so it is looked up by halves, not searched, and a
 * wide row of labels over another wide row costs no more than its cells.
 */
export function cellUnder(cell: LayoutCell, index: number, below: LayoutRow): number {
  const cells = below.cells;
  const direct = cells[index];
  if (direct !== undefined && isUnder(cell, index, direct, index)) return index;
  if (cells[0]?.columns !== cell.columns) return -1;
  let low = 0;
  let high = cells.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cells[middle]!.to <= cell.from) low = middle + 1;
    else high = middle;
  }
  return low < cells.length && isUnder(cell, index, cells[low]!, low) ? low : -1;
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

/** Points two elements' tops may differ by and still stand on one line. */
const SAME_LINE = 3;

/**
 * Rows of a page's placed elements (a PDF's, an OCR'd page's): elements whose tops align are one
 * row, its cells left to right, each cell as wide as its element. A PDF's text has lost the gaps
 * between its columns; its elements' boxes keep them.
 */
function placedRows(elements: readonly PlacedElement[], page: number, region: Region, pageText: string): LayoutRow[] {
  const sorted = [...elements].sort((a, b) => a.bbox[1] - b.bbox[1] || a.bbox[0] - b.bbox[0]);
  const rows: { top: number; row: LayoutRow }[] = [];
  const lines = new PageLines(pageText);
  for (const element of sorted) {
    const cell: LayoutCell = {
      lines: element.text.split("\n").flatMap((text) => lines.split(text)),
      from: element.bbox[0],
      to: element.bbox[2],
      columns: "extent",
      box: element.bbox,
    };
    const last = rows.at(-1);
    if (last !== undefined && Math.abs(element.bbox[1] - last.top) <= SAME_LINE) {
      last.row.cells.push(cell);
      continue;
    }
    const row: LayoutRow = { page, region, place: "line", cells: [cell], below: undefined };
    if (last !== undefined) last.row.below = row;
    rows.push({ top: element.bbox[1], row });
  }
  for (const { row } of rows) row.cells.sort((a, b) => a.from - b.from);
  return rows.map(({ row }) => row);
}

interface PlacedElement {
  text: string;
  bbox: BoundingBox;
}

/**
 * The rows a document is read in, body first: its Table elements' rows, then each page's lines,
 * then its headers' and footers' lines. A page whose elements have boxes (a PDF's) is read from
 * them, row by row; any other page from its text's lines. A table cell keeps its lines (a DOCX
 * cell's paragraphs and line breaks, an HTML cell's `<br>`s), so a value runs to the end of its
 * line, not of its cell.
 */
export function documentRows(document: ParsedDocument): LayoutRow[] {
  const tables: LayoutRow[] = [];
  const placed = new Map<number, { body: PlacedElement[]; margin: PlacedElement[] }>();
  const margins: LayoutRow[] = [];
  for (const element of document.elements) {
    const page = element.page ?? 1;
    const region: Region = MARGIN_TYPES.has(element.type) ? "margin" : "body";
    if (element.type === "Table" && element.table !== undefined) {
      const rows = element.table.rows.map(
        (cells): LayoutRow => ({
          page,
          region,
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
    } else if (element.bbox !== undefined) {
      const onPage = placed.get(page) ?? { body: [], margin: [] };
      onPage[region].push({ text: element.text, bbox: element.bbox });
      placed.set(page, onPage);
    } else if (region === "margin") margins.push(...lineRows(element.text, page, "margin"));
  }
  const lines = document.pages.flatMap(({ page, text }) => {
    const elements = placed.get(page);
    return elements === undefined ? lineRows(text, page, "body") : placedRows(elements.body, page, "body", text);
  });
  const pageTexts = new Map(document.pages.map(({ page, text }) => [page, text]));
  const placedMargins = [...placed].flatMap(([page, { margin }]) => placedRows(margin, page, "margin", pageTexts.get(page) ?? ""));
  return [...tables, ...lines, ...placedMargins, ...margins];
}
