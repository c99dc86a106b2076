import type { BoundingBox } from "./element.ts";
import { appendAll } from "../../../platform/arrays.ts";

/** A horizontal or vertical line a page draws, in points from its bottom-left corner (x0 <= x1, y0 <= y1). */
export interface PdfRule {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** What a grid needs of a text run: where it sits (its baseline's start, from the bottom-left) and how far it reaches. */
interface Placed {
  x: number;
  y: number;
  width: number;
  size: number;
}

/** A table drawn with ruling lines: its runs by cell (rows top to bottom, then columns left to right) and its frame from the top-left. */
export interface RuledGrid<Item> {
  cells: Item[][][];
  bbox: BoundingBox;
}

/** Rules this close (points) are one line; a rule reaching this close to another meets it (a 3-point border drawn as two stacked bars is one). */
const SNAP = 3;
/** A grid with text in fewer of its cells than this is a chart's gridlines and bars, not a table. */
const MIN_FILLED = 0.4;
/** A page drawing more rules than this is a picture drawn in lines (a chart, a map): no grid is looked for. */
export const MAX_RULES_PER_PAGE = 2000;

interface Line {
  /** y of a horizontal line, x of a vertical one. */
  at: number;
  from: number;
  to: number;
}

/** A grid's column cuts and row cuts (ascending), and the lines drawn on each cut. */
interface Frame {
  xs: number[];
  ys: number[];
  /** By index in ys: the horizontal lines on that cut. */
  rowLines: Line[][];
  /** By index in xs: the vertical lines on that cut. */
  columnLines: Line[][];
}

/**
 * The tables a page draws with ruling lines, and the runs outside them. A grid is a set of
 * horizontal and vertical lines that meet (at least two of each); its columns are cut at its
 * vertical lines and its rows at its horizontal ones, plus the ends of lines that reach past the
 * outermost ones (a table drawn without side or bottom borders). A run belongs to the cell holding
 * the middle of its text; a cell an edge of which is not drawn joins its neighbour (spanning
 * cells). A grid without text in two rows and two columns (a box drawn around a paragraph, a rule
 * between a page's columns), or with text in fewer than MIN_FILLED of its cells, or in cells most
 * of which have an undrawn edge (a chart's gridlines and bars), is not a table: its runs stay in
 * the page's text.
 */
export function ruledGrids<Item extends Placed>(
  items: readonly Item[],
  rules: readonly PdfRule[],
  pageHeight: number,
): { grids: RuledGrid<Item>[]; rest: Item[] } {
  if (rules.length === 0 || rules.length > MAX_RULES_PER_PAGE) return { grids: [], rest: [...items] };
  const horizontal = merged(rules.filter((rule) => rule.y1 - rule.y0 <= SNAP / 2).map((rule) => ({ at: (rule.y0 + rule.y1) / 2, from: rule.x0, to: rule.x1 })));
  const vertical = merged(rules.filter((rule) => rule.x1 - rule.x0 <= SNAP / 2).map((rule) => ({ at: (rule.x0 + rule.x1) / 2, from: rule.y0, to: rule.y1 })));
  const frames = gridFrames(horizontal, vertical);
  // Per grid, its cells' runs by row (from the top) * columns + column.
  const placed = frames.map(() => new Map<number, Item[]>());
  const starts = frames.map(() => new Map<number, number>());
  // Per grid, the cells holding text that an undrawn edge joined to another.
  const joined = frames.map(() => new Set<number>());
  const rest: Item[] = [];
  for (const item of items) {
    const x = item.x + item.width / 2;
    const y = item.y + item.size * 0.3;
    const index = frames.findIndex((frame) => inside(frame.xs, x) && inside(frame.ys, y));
    if (index === -1) {
      rest.push(item);
      continue;
    }
    const frame = frames[index]!;
    const own = (frame.ys.length - 2 - slot(frame.ys, y)) * frame.xs.length + slot(frame.xs, x);
    // The walk to a span's start is made once per cell.
    let key = starts[index]!.get(own);
    if (key === undefined) {
      const [row, column] = spanStart(frame, Math.floor(own / frame.xs.length), own % frame.xs.length);
      key = row * frame.xs.length + column;
      starts[index]!.set(own, key);
    }
    if (key !== own) joined[index]!.add(own);
    const cell = placed[index]!.get(key);
    if (cell === undefined) placed[index]!.set(key, [item]);
    else cell.push(item);
  }
  const grids: RuledGrid<Item>[] = [];
  frames.forEach(({ xs, ys }, index) => {
    const cellsWithText = placed[index]!;
    // Rows from the top (the highest y), columns from the left; rows and columns with no text dropped.
    const used = (of: (key: number) => number) => [...new Set([...cellsWithText.keys()].map(of))].sort((a, b) => a - b);
    const rowsUsed = used((key) => Math.floor(key / xs.length));
    const columnsUsed = used((key) => key % xs.length);
    const textCells = starts[index]!.size;
    const chart = joined[index]!.size * 2 > textCells || cellsWithText.size < rowsUsed.length * columnsUsed.length * MIN_FILLED;
    if (rowsUsed.length < 2 || columnsUsed.length < 2 || chart) {
      for (const cell of cellsWithText.values()) appendAll(rest, cell);
      return;
    }
    const rows = rowsUsed.map((row) => columnsUsed.map((column) => cellsWithText.get(row * xs.length + column) ?? []));
    grids.push({ cells: rows.flatMap(textRows), bbox: [xs[0]!, pageHeight - ys.at(-1)!, xs.at(-1)!, pageHeight - ys[0]!] });
  });
  return { grids, rest };
}

/**
 * The first cell (row from the top, column) of the span a cell belongs to: a cell whose top edge no
 * line draws joins the cell above it (a header spanning two rows), and one whose left edge no line
 * draws joins the cell to its left (a header spanning two columns).
 */
function spanStart(frame: Frame, row: number, column: number): [number, number] {
  const { xs, ys, rowLines, columnLines } = frame;
  // Row r (from the top) lies between the cuts ys[top(r) - 1] and ys[top(r)].
  const top = (r: number) => ys.length - 1 - r;
  const drawn = (lines: readonly Line[], middle: number) => lines.some((line) => line.from - SNAP <= middle && line.to + SNAP >= middle);
  while (row > 0 && !drawn(rowLines[top(row)]!, (xs[column]! + xs[column + 1]!) / 2)) row--;
  while (column > 0 && !drawn(columnLines[column]!, (ys[top(row)]! + ys[top(row) - 1]!) / 2)) column--;
  return [row, column];
}

/**
 * A grid row as one row of cells, or as several when every cell holding text holds the same number
 * of lines (two or more) on the same baselines: a table ruled only around its header and between
 * its columns sets one body row per line. A cell whose text wraps while the others' does not keeps
 * its lines together.
 */
function textRows<Item extends Placed>(cells: Item[][]): Item[][][] {
  const baselines = cells.map((cell) => {
    const found: number[] = [];
    for (const y of cell.map((item) => item.y).sort((a, b) => b - a)) if (found.length === 0 || found.at(-1)! - y > SNAP) found.push(y);
    return found;
  });
  const filled = baselines.filter((found) => found.length > 0);
  const first = filled[0] ?? [];
  const aligned =
    filled.length >= 2
    && first.length >= 2
    && filled.every((found) => found.length === first.length && found.every((y, at) => Math.abs(y - first[at]!) <= SNAP));
  if (!aligned) return [cells];
  return first.map((line) => cells.map((cell) => cell.filter((item) => Math.abs(item.y - line) <= SNAP)));
}

/** Lines on one coordinate (within SNAP) that overlap or touch joined into one: a row's border drawn cell by cell is one line. */
function merged(lines: Line[]): Line[] {
  lines.sort((a, b) => a.at - b.at || a.from - b.from);
  const joined: Line[] = [];
  for (const line of lines) {
    const last = joined.at(-1);
    if (last !== undefined && line.at - last.at <= SNAP / 2 && line.from <= last.to + SNAP) last.to = Math.max(last.to, line.to);
    else joined.push({ ...line });
  }
  return joined;
}

/** The column and row cuts (ascending) of each set of meeting lines with at least two of each kind, two rows and two columns. */
function gridFrames(horizontal: readonly Line[], vertical: readonly Line[]): Frame[] {
  const parent = Array.from({ length: horizontal.length + vertical.length }, (_, index) => index);
  const root = (index: number): number => {
    while (parent[index] !== index) {
      parent[index] = parent[parent[index]!]!;
      index = parent[index]!;
    }
    return index;
  };
  horizontal.forEach((h, i) => {
    vertical.forEach((v, j) => {
      const meet = v.at >= h.from - SNAP && v.at <= h.to + SNAP && h.at >= v.from - SNAP && h.at <= v.to + SNAP;
      if (meet) parent[root(horizontal.length + j)] = root(i);
    });
  });
  const groups = new Map<number, { h: Line[]; v: Line[] }>();
  const group = (index: number) => {
    const key = root(index);
    const found = groups.get(key) ?? { h: [], v: [] };
    groups.set(key, found);
    return found;
  };
  horizontal.forEach((line, i) => group(i).h.push(line));
  vertical.forEach((line, j) => group(horizontal.length + j).v.push(line));
  const frames: Frame[] = [];
  for (const { h, v } of groups.values()) {
    if (h.length < 2 || v.length < 2) continue;
    const xs = cuts([...v.map((line) => line.at), ...h.map((line) => line.from), ...h.map((line) => line.to)]);
    const ys = cuts([...h.map((line) => line.at), ...v.map((line) => line.from), ...v.map((line) => line.to)]);
    if (xs.length < 3 || ys.length < 3) continue;
    const rowLines = ys.map((): Line[] => []);
    const columnLines = xs.map((): Line[] => []);
    for (const line of h) rowLines[nearest(ys, line.at)]!.push(line);
    for (const line of v) columnLines[nearest(xs, line.at)]!.push(line);
    frames.push({ xs, ys, rowLines, columnLines });
  }
  return frames;
}

/** Distinct coordinates, ascending, those within SNAP of the one before taken as it. */
function cuts(values: number[]): number[] {
  values.sort((a, b) => a - b);
  const found: number[] = [];
  for (const value of values) if (found.length === 0 || value - found.at(-1)! > SNAP) found.push(value);
  return found;
}

/** The index of the cut nearest `value`. */
function nearest(cutsAscending: readonly number[], value: number): number {
  const at = Math.min(cutsAscending.length - 1, slot(cutsAscending, value) + 1);
  return at > 0 && value - cutsAscending[at - 1]! < cutsAscending[at]! - value ? at - 1 : at;
}

function inside(cutsAscending: readonly number[], value: number): boolean {
  return value >= cutsAscending[0]! && value <= cutsAscending.at(-1)!;
}

/** Which span between the ascending cuts holds `value` (0 for the first). */
function slot(cutsAscending: readonly number[], value: number): number {
  let low = 1;
  let high = cutsAscending.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (value > cutsAscending[middle]!) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}
