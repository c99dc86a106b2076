import { type BoundingBox, type Element, headingLevel } from "./element.ts";
import { type PdfRule, ruledGrids } from "./pdf-rules.ts";
import { classifyText, LIST_MARKER, withoutBullet } from "./plain-text.ts";
import { tableElement } from "./table.ts";
import { appendAll, maxOf, minOf } from "../../../platform/arrays.ts";

/** One run of text as pdf.js reports it: its string, baseline origin (PDF user space, from the bottom) and size. */
interface PdfTextItem {
  str: string;
  /** The baseline's start, from the page's bottom-left corner. */
  x: number;
  y: number;
  width: number;
  /** Font size: the length of the text matrix's vertical vector. */
  size: number;
  /** pdf.js's name for the run's font. */
  font: string;
  /** For a run not read left to right on the page as seen (a label turned up a margin): its baseline's unit vector, y up. */
  direction?: readonly [number, number];
}

/** The text items of one page and its size in points. */
export interface PdfLayoutPage {
  page: number;
  width: number;
  height: number;
  items: readonly PdfTextItem[];
  /** The horizontal and vertical lines the page draws, when they were read (a parse with `ruling_lines`). */
  rules?: readonly PdfRule[];
}

/** A piece of one line: items on a baseline, split where a gap is wider than a word space (a column gutter, a table's cells). */
interface Segment {
  text: string;
  x0: number;
  x1: number;
  /** From the page's top: the top of the text and its baseline. */
  top: number;
  bottom: number;
  size: number;
  /** Every run of it is set in a bold (or black) font. */
  bold: boolean;
  /** How many segments its line has (itself included): a table's row has several, a heading one or two (beside another column). */
  peers: number;
}

/** The part of the page's height, from its top and from its bottom, where running headers and footers sit. */
const MARGIN_BAND = 0.12;
/** Text at least this much larger than the body is a heading. */
const TITLE_RATIO = 1.15;
const MAX_TITLE_CHARS = 300;
/** A line ending so ends a sentence or a clause. */
const ENDS_CLAUSE = /[.!?:;]["'”’)\]]?$/;
/** The hyphens a word broken at a line's end is written with (joinLines). */
const HYPHEN_MINUS = 0x2d;
const HYPHEN = 0x2010;
const SOFT_HYPHEN = 0xad;
/** A bold line at the body's size longer than this is emphasis, not a heading. */
const MAX_BOLD_TITLE_CHARS = 120;
const PAGE_NUMBER = /^(?:page\s*)?(?:#|[ivxlc]+)(?:\s*(?:of|\/)\s*#)?$|^[-–]\s*#\s*[-–]$/i;

/**
 * Elements of a PDF's pages from the positions, sizes and fonts of their text (and, when read, the
 * lines they draw): our own layout analysis, because the PDF libraries we keep (unpdf, pdf.js) give
 * text runs, not structure.
 *
 * - Lines: runs on one baseline, split at gaps wider than a word space.
 * - Running headers, footers and page numbers: lines in the top or bottom band of a page that
 *   repeat (digits aside) on other pages, or that read as a page number; typed as such, apart
 *   from the narrative.
 * - Tables: cells drawn with ruling lines (src/documents/parse/elements/pdf-rules.ts), and consecutive lines
 *   split into the same aligned cells.
 * - Reading order: lines are grouped into blocks that share their column gutters; a block is read
 *   column by column, so a left column comes before the right whatever order the PDF draws them in,
 *   and a full-width title above the columns comes first.
 * - Paragraphs: lines of one size and weight close together; a line starting with a list marker starts a ListItem.
 * - Titles: text larger than the body's size (the most common one), ranked by size into levels;
 *   then short lines set in bold at the body's size, a level below the smallest of those (unless
 *   the body itself is bold).
 */
export function pdfLayoutElements(pages: readonly PdfLayoutPage[], boldFonts: ReadonlySet<string> = new Set()): Element[] {
  const upright = pages.map((page) => page.items.filter((item) => item.direction === undefined));
  const ruled = pages.map((page, index) => ruledGrids(upright[index]!, page.rules ?? [], page.height));
  const lines = pages.map((page, index) => pageLines(page.height, ruled[index]!.rest, boldFonts));
  const furniture = findFurniture(pages, lines);
  const body = bodyStyle(lines.flat());
  const titleSizes = [
    ...new Set(
      lines
        .flat()
        .filter((line) => line.size >= body.size * TITLE_RATIO)
        .map((line) => roundSize(line.size)),
    ),
  ].sort((a, b) => b - a);
  const headings = { bodySize: body.size, titleSizes, boldTitles: !body.bold };
  const elements: Element[] = [];
  pages.forEach((page, index) => {
    const pageFurniture = furniture[index]!;
    const text = lines[index]!.filter((line) => !pageFurniture.has(line));
    const tables = ruled[index]!.grids.map(
      (grid): TableBlock => ({
        kind: "table",
        rows: grid.cells.map((row) => row.map((cell) => cellText(page.height, cell))),
        bbox: grid.bbox,
      }),
    );
    const top = [...pageFurniture].filter(([line]) => line.top < page.height / 2);
    const bottom = [...pageFurniture].filter(([line]) => line.top >= page.height / 2);
    for (const [line, type] of top) elements.push({ type, text: line.text, page: page.page, bbox: box([line]) });
    for (const block of withTables(text, tables)) {
      if (block.kind === "table") {
        const table = tableElement(block.rows, { page: page.page, bbox: block.bbox });
        if (table !== undefined) elements.push(table);
        continue;
      }
      for (const paragraph of paragraphs(block.segments)) elements.push(classifyParagraph(paragraph, page.page, headings));
    }
    for (const line of turnedLines(page.height, page.items)) elements.push({ type: "UncategorizedText", text: line.text, page: page.page, bbox: line.bbox });
    for (const [line, type] of bottom) elements.push({ type, text: line.text, page: page.page, bbox: box([line]) });
  });
  return elements;
}

/**
 * The lines of the runs not read left to right (a label turned up a margin, an arXiv identifier, a
 * rotated table heading), each its own element after the page's body, top to bottom: laid out with
 * the upright lines, their runs fell one per line or into the lines they cross. A line is the runs
 * in drawing order that go one way and follow one another along it.
 */
function turnedLines(pageHeight: number, items: readonly PdfTextItem[]): { text: string; bbox: BoundingBox }[] {
  // `last`: the line's last run, whose end is tested for a space (testing the growing text costs its length per run).
  const lines: { text: string; last: string; points: [number, number][]; end: [number, number]; direction: readonly [number, number]; size: number }[] = [];
  for (const item of items) {
    const direction = item.direction;
    if (direction === undefined || item.str.trim() === "" || item.size <= 0) continue;
    const [ux, uy] = direction;
    const end: [number, number] = [item.x + ux * item.width, item.y + uy * item.width];
    // The run's corners: its baseline's ends, and the same raised by its size (up is the direction turned left).
    const points: [number, number][] = [
      [item.x, item.y],
      end,
      [item.x - uy * item.size, item.y + ux * item.size],
      [end[0] - uy * item.size, end[1] + ux * item.size],
    ];
    const line = lines.at(-1);
    if (line !== undefined && line.direction[0] * ux + line.direction[1] * uy > 0.99) {
      const [gx, gy] = [item.x - line.end[0], item.y - line.end[1]];
      const along = gx * ux + gy * uy;
      const across = Math.abs(-gx * uy + gy * ux);
      const size = Math.max(line.size, item.size);
      if (across <= size * 0.3 && along > -size && along <= size * 3) {
        line.text += along > item.size * 0.15 && !/\s$/.test(line.last) && !/^\s/.test(item.str) ? ` ${item.str}` : item.str;
        line.last = item.str;
        appendAll(line.points, points);
        line.end = end;
        line.size = size;
        continue;
      }
    }
    lines.push({ text: item.str, last: item.str, points, end, direction, size: item.size });
  }
  return lines
    .map((line) => {
      const xs = line.points.map(([x]) => x);
      const ys = line.points.map(([, y]) => y);
      const bbox: BoundingBox = [minOf(xs), pageHeight - maxOf(ys), maxOf(xs), pageHeight - minOf(ys)].map(
        (value) => Math.round(value * 10) / 10,
      ) as BoundingBox;
      return { text: line.text.replace(/\s+/g, " ").trim(), bbox };
    })
    .filter((line) => line.text !== "")
    .sort((a, b) => a.bbox[1] - b.bbox[1]);
}

/** A cell's runs as text: its lines, top to bottom, joined by a space. */
function cellText(pageHeight: number, items: readonly PdfTextItem[]): string {
  return pageLines(pageHeight, items, new Set())
    .map((line) => line.text)
    .join(" ");
}

/**
 * The page's blocks in reading order with its ruled tables among them: the text above each table's
 * top (by reading order), then the table.
 */
function withTables(segments: readonly Segment[], tables: readonly TableBlock[]): Block[] {
  const blocks: Block[] = [];
  let rest = segments;
  for (const table of [...tables].sort((a, b) => a.bbox[1] - b.bbox[1])) {
    appendAll(blocks, readingOrder(rest.filter((segment) => segment.top < table.bbox[1])));
    blocks.push(table);
    rest = rest.filter((segment) => segment.top >= table.bbox[1]);
  }
  appendAll(blocks, readingOrder(rest));
  return blocks;
}

/** The segments of a page's runs, top to bottom, left to right. */
function pageLines(pageHeight: number, runs: readonly PdfTextItem[], boldFonts: ReadonlySet<string>): Segment[] {
  const items = runs
    .filter((item) => item.str.trim() !== "" && item.size > 0)
    .map((item) => ({ ...item, baseline: pageHeight - item.y, bold: boldFonts.has(item.font) }))
    .sort((a, b) => a.baseline - b.baseline || a.x - b.x);
  const rows: (typeof items)[] = [];
  for (const item of items) {
    const row = rows.at(-1);
    if (row !== undefined && Math.abs(row[0]!.baseline - item.baseline) <= Math.min(row[0]!.size, item.size) * 0.3) row.push(item);
    else rows.push([item]);
  }
  const segments: Segment[] = [];
  for (const row of rows) {
    row.sort((a, b) => a.x - b.x);
    const rowStart = segments.length;
    let segment: Segment | undefined;
    // The segment's text ends with this item's: testing the text itself (`/\s$/`, or its last character,
    // which flattens the string built by +=) cost the length of the line for each run on it.
    let last = "";
    for (const item of row) {
      const gap = segment === undefined ? 0 : item.x - segment.x1;
      if (segment === undefined || gap > Math.max(segment.size, item.size) * 1.2) {
        segment = {
          text: item.str,
          x0: item.x,
          x1: item.x + item.width,
          top: item.baseline - item.size,
          bottom: item.baseline,
          size: item.size,
          bold: item.bold,
          peers: 1,
        };
        segments.push(segment);
        last = item.str;
        continue;
      }
      const space = gap > item.size * 0.15 && !/\s/.test(last.at(-1)!) && !/^\s/.test(item.str) ? " " : "";
      segment.text += space + item.str;
      last = item.str;
      segment.x1 = Math.max(segment.x1, item.x + item.width);
      segment.top = Math.min(segment.top, item.baseline - item.size);
      segment.size = Math.max(segment.size, item.size);
      segment.bold &&= item.bold;
    }
    for (let at = rowStart; at < segments.length; at++) segments[at]!.peers = segments.length - rowStart;
  }
  for (const segment of segments) segment.text = segment.text.replace(/\s+/g, " ").trim();
  return segments;
}

/** Per page, the lines that are running headers, footers or page numbers, with their type. */
function findFurniture(pages: readonly PdfLayoutPage[], lines: Segment[][]): Map<Segment, Element["type"]>[] {
  const inBand = (page: PdfLayoutPage, line: Segment) => line.bottom <= page.height * MARGIN_BAND || line.top >= page.height * (1 - MARGIN_BAND);
  const key = (line: Segment) => line.text.toLowerCase().replace(/\d+/g, "#").replace(/\s+/g, " ");
  const pagesByKey = new Map<string, Set<number>>();
  pages.forEach((page, index) => {
    for (const line of lines[index]!) {
      if (!inBand(page, line)) continue;
      const k = `${line.top < page.height / 2 ? "top" : "bottom"}:${key(line)}`;
      pagesByKey.set(k, (pagesByKey.get(k) ?? new Set()).add(index));
    }
  });
  return pages.map((page, index) => {
    const found = new Map<Segment, Element["type"]>();
    for (const line of lines[index]!) {
      if (!inBand(page, line)) continue;
      const top = line.top < page.height / 2;
      const repeated = (pagesByKey.get(`${top ? "top" : "bottom"}:${key(line)}`)?.size ?? 0) >= 2;
      if (PAGE_NUMBER.test(key(line)) && (repeated || pages.length > 1)) found.set(line, "PageNumber");
      else if (repeated) found.set(line, top ? "Header" : "Footer");
    }
    return found;
  });
}

type TableBlock = { kind: "table"; rows: string[][]; bbox: BoundingBox };
type Block = { kind: "text"; segments: Segment[] } | TableBlock;

/** The body's blocks in reading order: tables, and runs of lines sharing their column gutters, each read column by column. */
function readingOrder(segments: readonly Segment[]): Block[] {
  const bands = toBands(segments);
  const width = Math.max(0, maxOf(segments.map((segment) => segment.x1))) - minOf(segments.map((segment) => segment.x0));
  const blocks: Block[] = [];
  let current: Segment[] = [];
  // The x-extent of `current`, kept up to date band by band: recomputing its gutters for every band made a page of n lines cost n² log n.
  let outline: Outline = [];
  const endText = () => {
    if (current.length > 0)
      appendAll(
        blocks,
        columns(current).map((column): Block => ({ kind: "text", segments: column })),
      );
    current = [];
  };
  for (let index = 0; index < bands.length; ) {
    const table = tableAt(bands, index, width);
    if (table !== undefined) {
      endText();
      blocks.push(table.block);
      index = table.next;
      continue;
    }
    const band = bands[index]!;
    const bandOutline = outlineOf(band);
    if (current.length > 0) {
      const before = gutterCount(outline);
      if (gutterCount(bandOutline) > before) endText();
      else {
        for (const segment of band) addToOutline(outline, segment);
        if (gutterCount(outline) !== before) endText();
      }
    }
    if (current.length === 0) outline = bandOutline;
    appendAll(current, band);
    index++;
  }
  endText();
  return blocks;
}

/** Segments grouped into horizontal bands: those whose vertical extents overlap. */
function toBands(segments: readonly Segment[]): Segment[][] {
  const sorted = [...segments].sort((a, b) => a.top - b.top || a.x0 - b.x0);
  const bands: Segment[][] = [];
  let bottom = -Infinity;
  for (const segment of sorted) {
    const band = bands.at(-1);
    if (band !== undefined && segment.top < bottom - segment.size * 0.3) {
      band.push(segment);
      bottom = Math.max(bottom, segment.bottom);
    } else {
      bands.push([segment]);
      bottom = segment.bottom;
    }
  }
  for (const band of bands) band.sort((a, b) => a.x0 - b.x0);
  return bands;
}

/** The gaps free of text across all `segments`, wider than a word space: the gutters between columns. */
function gutters(segments: readonly Segment[]): [number, number][] {
  const spans = segments.map((segment) => [segment.x0, segment.x1] as const).sort((a, b) => a[0] - b[0]);
  const found: [number, number][] = [];
  let end = -Infinity;
  for (const [x0, x1] of spans) {
    if (end !== -Infinity && x0 - end > 0) found.push([end, x0]);
    end = Math.max(end, x1);
  }
  return found;
}

/**
 * A block's horizontal extent as `gutters` reads it, for counting its gutters as bands are added:
 * runs sorted by start (ties in the order added), each starting past the end of every run before
 * it, so a gutter lies before each run but the first. A run is the union of segments that overlap
 * or touch (end >= start), or a single segment ending before its own start (a negative width, as
 * mirrored text has), which `gutters` reads as starting at x0 and reaching only to x1.
 */
type Outline = { start: number; end: number }[];

/** The outline of `segments`. */
function outlineOf(segments: readonly Segment[]): Outline {
  const outline: Outline = [];
  for (const segment of segments) addToOutline(outline, segment);
  return outline;
}

/** The number of gutters `gutters` finds in the segments the outline was made of. */
function gutterCount(outline: Outline): number {
  return Math.max(0, outline.length - 1);
}

/**
 * Adds a segment to an outline in what the runs it touches cost, so a band of a long page costs its
 * own size: a binary search for its place, then the runs it reaches merged into its own.
 */
function addToOutline(outline: Outline, segment: Segment): void {
  const { x0, x1 } = segment;
  // The last run starting at or before x0: `gutters` sorts the segment after those.
  let low = 0;
  let high = outline.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (outline[middle]!.start <= x0) low = middle + 1;
    else high = middle;
  }
  const before = outline[low - 1];
  let run: { start: number; end: number };
  if (before !== undefined && x0 <= before.end) {
    // Within a run (one of negative width ends before its start, so never holds x0).
    if (x1 <= before.end) return;
    before.end = x1;
    run = before;
  } else {
    run = { start: x0, end: x1 };
    outline.splice(low, 0, run);
    low++;
    // A segment of negative width reaches no run after it: they all start past x0.
    if (x1 < x0) return;
  }
  // The runs after it that now start within its reach join it.
  let reached = low;
  while (reached < outline.length && outline[reached]!.start <= run.end) {
    run.end = Math.max(run.end, outline[reached]!.end);
    reached++;
  }
  outline.splice(low, reached - low);
}

/** The segments of a block, split at its gutters into columns, left to right, each top to bottom. */
function columns(segments: readonly Segment[]): Segment[][] {
  // Ascending: gutters' starts (a running maximum) and ends (sorted starts) both are.
  const cuts = gutters(segments).map(([start, end]) => (start + end) / 2);
  const split: Segment[][] = Array.from({ length: cuts.length + 1 }, () => []);
  for (const segment of segments) split[cutsBefore(cuts, segment.x0)]!.push(segment);
  return split.filter((column) => column.length > 0).map((column) => column.sort((a, b) => a.top - b.top));
}

/** How many of the ascending `cuts` lie left of `x`, by binary search: filtering them all for each segment made a line of n runs cost n². */
function cutsBefore(cuts: readonly number[], x: number): number {
  let low = 0;
  let high = cuts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (x > cuts[middle]!) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * A table starting at band `index`: at least two bands of two or more narrow segments whose cells
 * line up (by left edge, right edge or centre) with the first band's.
 */
function tableAt(bands: readonly Segment[][], index: number, width: number): { block: Block; next: number } | undefined {
  // Narrower than a column of a two-column page: those line up too, but are read column by column.
  const isRow = (band: Segment[]) => band.length >= 2 && band.every((segment) => segment.x1 - segment.x0 < width * 0.35);
  const first = bands[index]!;
  if (!isRow(first)) return undefined;
  const rows = [first.map((segment) => segment.text)];
  const segments = [...first];
  let next = index + 1;
  for (; next < bands.length; next++) {
    const band = bands[next]!;
    const previous = bands[next - 1]!;
    if (!isRow(band) || band[0]!.top - maxOf(previous.map((segment) => segment.bottom)) > band[0]!.size * 2.5) break;
    const cells = alignedCells(first, band);
    if (cells === undefined) break;
    rows.push(cells);
    appendAll(segments, band);
  }
  return rows.length >= 2 ? { block: { kind: "table", rows, bbox: box(segments) }, next } : undefined;
}

/** The band's texts placed in the header's columns, or undefined when a segment lines up with none of them. */
function alignedCells(header: readonly Segment[], band: readonly Segment[]): string[] | undefined {
  const cells = header.map(() => "");
  for (const segment of band) {
    const tolerance = Math.max(3, segment.size * 0.5);
    const column = header.findIndex(
      (cell, at) =>
        cells[at] === ""
        && (Math.abs(cell.x0 - segment.x0) <= tolerance
          || Math.abs(cell.x1 - segment.x1) <= tolerance
          || Math.abs((cell.x0 + cell.x1) / 2 - (segment.x0 + segment.x1) / 2) <= tolerance),
    );
    if (column === -1) return undefined;
    cells[column] = segment.text;
  }
  return cells;
}

/**
 * A column's lines joined into paragraphs: same size and weight, close together, a list marker
 * starting a new one, and a line that ended early (a hard break) ending its paragraph.
 */
function paragraphs(lines: readonly Segment[]): Segment[][] {
  const found: Segment[][] = [];
  const right = maxOf(lines.map((line) => line.x1));
  for (const line of lines) {
    const paragraph = found.at(-1);
    const previous = paragraph?.at(-1);
    const joins =
      previous !== undefined
      && Math.abs(previous.size - line.size) <= 0.5
      && !(line.bold && !previous.bold && ENDS_CLAUSE.test(previous.text))
      && line.top - previous.bottom <= line.size * 0.6
      && !LIST_MARKER.test(line.text)
      && (!LIST_MARKER.test(paragraph![0]!.text) || line.x0 > paragraph![0]!.x0 + line.size * 0.5)
      && !endedEarly(previous, line, right);
    if (joins) paragraph!.push(line);
    else found.push([line]);
  }
  return found;
}

/**
 * Whether `previous` ended before the column's right edge with room for the first word of `next`:
 * text set to a width wraps only when the next word does not fit, so a line that stops short of it
 * was broken on purpose (an address, an invoice's "Label: value" lines, a paragraph's last line). The
 * word's width is estimated from its line's mean character width, with a margin for proportional
 * type; a line ending with a hyphen wrapped a word.
 */
function endedEarly(previous: Segment, next: Segment, right: number): boolean {
  if (/[-\u2010\u00ad]$/.test(previous.text)) return false;
  // A sentence going on: no stop at the end, a lower-case letter at the start of the next line.
  if (/^\p{Ll}/u.test(next.text) && !ENDS_CLAUSE.test(previous.text)) return false;
  const space = next.text.indexOf(" ");
  const wordLength = space === -1 ? next.text.length : space;
  const characterWidth = (next.x1 - next.x0) / Math.max(1, next.text.length);
  return previous.x1 + previous.size * 0.3 + wordLength * characterWidth * 1.3 + previous.size * 0.5 < right;
}

/** What a paragraph's lines are compared with to find titles. */
interface Headings {
  bodySize: number;
  /** Sizes of title text, largest first: a title's level is its size's place here. */
  titleSizes: readonly number[];
  /** Whether short bold lines at the body's size are titles (not when the body itself is bold). */
  boldTitles: boolean;
}

function classifyParagraph(lines: readonly Segment[], page: number, headings: Headings): Element {
  const text = joinLines(lines);
  const placement = { page, bbox: box(lines) };
  const size = maxOf(lines.map((line) => line.size));
  if (size >= headings.bodySize * TITLE_RATIO && text.length <= MAX_TITLE_CHARS) {
    return { type: "Title", text, level: headingLevel(headings.titleSizes.indexOf(roundSize(size)) + 1), ...placement };
  }
  if (headings.boldTitles && lines.every((line) => line.bold && line.peers <= 2) && isBoldHeading(text, lines.length)) {
    return { type: "Title", text, level: headingLevel(headings.titleSizes.length + 1), ...placement };
  }
  if (LIST_MARKER.test(text)) return { type: "ListItem", text: withoutBullet(text), ...placement };
  const classified = classifyText(text, false);
  return { ...classified, ...placement };
}

/**
 * A paragraph's lines as one text, a space between two lines, but a word hyphenated at a line's end
 * whole again: a hyphen (`-`, U+2010) after a letter before a lower-case letter is dropped with the
 * break ("appli-" "cation"), as is a soft hyphen (U+00AD) before anything. A hyphen before a capital or a
 * digit stays, with no space ("Jean-" "Paul"; "COVID-" "19"). A compound broken at its own hyphen
 * ("well-" "known") loses it, the price of the far more common hyphenated word.
 */
function joinLines(lines: readonly Segment[]): string {
  // Pieces joined once: dropping a hyphen from the text joined so far would copy all of it per line.
  const pieces: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.text;
    const next = lines[index + 1]?.text;
    if (next === undefined) {
      pieces.push(line);
      break;
    }
    const last = line.charCodeAt(line.length - 1);
    if (last === SOFT_HYPHEN) pieces.push(line.slice(0, -1));
    else if ((last === HYPHEN_MINUS || last === HYPHEN) && /\p{L}.$/u.test(line)) pieces.push(/^\p{Ll}/u.test(next) ? line.slice(0, -1) : line);
    else pieces.push(line, " ");
  }
  return pieces.join("");
}

/**
 * A bold paragraph reads as a heading: at most two short lines, starting with a letter that is not
 * lower-case or with a section number before a word ("2.1 Scope"), not ending as a sentence or a
 * clause does. A number is no heading (a table's bold total).
 */
function isBoldHeading(text: string, lineCount: number): boolean {
  return lineCount <= 2 && text.length <= MAX_BOLD_TITLE_CHARS && /^(?:[\p{Lu}\p{Lt}\p{Lo}]|\d+(?:\.\d+)*\.?\s+\p{L})/u.test(text) && !/[.,;]$/.test(text);
}

/** The size most characters are set in (the body text's), and whether most of those are bold. */
function bodyStyle(lines: readonly Segment[]): { size: number; bold: boolean } {
  const counts = new Map<number, { all: number; bold: number }>();
  for (const line of lines) {
    const count = counts.get(roundSize(line.size)) ?? { all: 0, bold: 0 };
    count.all += line.text.length;
    if (line.bold) count.bold += line.text.length;
    counts.set(roundSize(line.size), count);
  }
  let best = { size: 0, all: -1, bold: 0 };
  for (const [size, count] of counts) {
    if (count.all > best.all) best = { size, ...count };
  }
  return { size: best.size, bold: best.bold * 2 > best.all };
}

function roundSize(size: number): number {
  return Math.round(size * 2) / 2;
}

function box(segments: readonly Segment[]): BoundingBox {
  const round = (value: number) => Math.round(value * 10) / 10;
  return [
    round(minOf(segments.map((segment) => segment.x0))),
    round(minOf(segments.map((segment) => segment.top))),
    round(maxOf(segments.map((segment) => segment.x1))),
    round(maxOf(segments.map((segment) => segment.bottom))),
  ];
}
