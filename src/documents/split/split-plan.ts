/** How a split node cuts a document: exactly one of the three is set (see SplitNode in pipe.proto). */
export interface SplitSettings {
  pagesPerPart: number;
  ranges: string;
  atText: string;
}

/** One part of a split document: its pages (1-based, inclusive) and its label. */
export interface PartPlan {
  firstPage: number;
  lastPage: number;
  label: string;
}

/** Every code a split step can fail with beside the task pool's; the step's error starts with it. */
export const SPLIT_ERROR_CODES = ["split_too_many_parts", "split_pages_out_of_range", "split_too_large"] as const;
type SplitErrorCode = (typeof SPLIT_ERROR_CODES)[number];

/** A document the split's settings cannot cut as asked; an own `code`, so it survives the pool's process boundary. */
export class SplitError extends Error {
  override name = "SplitError";
  readonly code: SplitErrorCode;

  constructor(code: SplitErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The most bytes a document's parts may hold together: 8 times the document, and 64 MB. A part
 * copies what its pages use, so parts whose pages share one large image (or overlapping ranges)
 * each hold a copy: a 1.6 MB PDF of 100 pages sharing an image made 160 MB of parts, all handed to
 * the process that runs the worker. A TIFF's parts are recompressed (LZW), so they may be larger
 * than its pages were.
 */
export function maxSplitOutputBytes(documentBytes: number): number {
  return 8 * documentBytes + 64 * 1024 * 1024;
}

/** Adds a part's size to `total`, failing the split with split_too_large once the parts pass maxSplitOutputBytes. */
export function countPartBytes(total: number, partBytes: number, documentBytes: number): number {
  const sum = total + partBytes;
  const limit = maxSplitOutputBytes(documentBytes);
  if (sum > limit) {
    throw new SplitError(
      "split_too_large",
      `its parts would hold more than ${Math.floor(limit / (1024 * 1024))} MB together (8 times the document, and 64 MB)`,
    );
  }
  return sum;
}

/** A range list has at most this many ranges; far more than any bundle's documents. */
const MAX_RANGES = 1000;
/** at_text is a short marker such as a separator sheet's word. */
export const MAX_AT_TEXT_LENGTH = 200;
/** A part's label made from its first page's matching line is cut to this many characters. */
const MAX_LABEL_LENGTH = 200;

const RANGE = /^\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?$/;

/**
 * "1-2,3-7,8" as page ranges, or the reason it is not one (for the pipeline's validation): each
 * range is a page or first-last with first <= last, pages from 1.
 */
export function parseRanges(text: string): { firstPage: number; lastPage: number }[] | string {
  const pieces = text.split(",");
  if (pieces.length > MAX_RANGES) return `at most ${MAX_RANGES} ranges`;
  const ranges: { firstPage: number; lastPage: number }[] = [];
  for (const piece of pieces) {
    const match = RANGE.exec(piece);
    if (match === null) return `"${piece.trim().slice(0, 50)}" is not a page or a range such as "3-7"`;
    const firstPage = Number(match[1]);
    const lastPage = match[2] === undefined ? firstPage : Number(match[2]);
    if (firstPage < 1 || lastPage < firstPage) return `"${piece.trim()}" must go from page 1 or later to a page not before its first`;
    ranges.push({ firstPage, lastPage });
  }
  return ranges;
}

function pagesLabel(firstPage: number, lastPage: number): string {
  return firstPage === lastPage ? `page ${firstPage}` : `pages ${firstPage}-${lastPage}`;
}

function tooMany(maxParts: number): SplitError {
  return new SplitError("split_too_many_parts", `the document would make more than ${maxParts} parts (SPLIT_MAX_PARTS)`);
}

/**
 * The parts of a document of `pageCount` pages. `pageText` is read only for at_text, page by page,
 * so a document that would pass `maxParts` fails as soon as it does. Throws SplitError.
 */
export async function planParts(
  settings: SplitSettings,
  pageCount: number,
  pageText: (page: number) => Promise<string>,
  maxParts: number,
): Promise<PartPlan[]> {
  if (settings.pagesPerPart > 0) {
    const count = Math.ceil(pageCount / settings.pagesPerPart);
    if (count > maxParts) throw tooMany(maxParts);
    return Array.from({ length: count }, (_, index) => {
      const firstPage = index * settings.pagesPerPart + 1;
      const lastPage = Math.min(pageCount, firstPage + settings.pagesPerPart - 1);
      return { firstPage, lastPage, label: pagesLabel(firstPage, lastPage) };
    });
  }
  if (settings.ranges !== "") {
    const ranges = parseRanges(settings.ranges);
    // The pipeline's validation refuses a bad list; this holds for a pipeline saved by hand in the database.
    if (typeof ranges === "string") throw new SplitError("split_pages_out_of_range", ranges);
    if (ranges.length > maxParts) throw tooMany(maxParts);
    const outside = ranges.find((range) => range.lastPage > pageCount);
    if (outside !== undefined) {
      throw new SplitError("split_pages_out_of_range", `the range ${pagesLabel(outside.firstPage, outside.lastPage)} ends after the last page, ${pageCount}`);
    }
    return ranges.map((range) => ({ ...range, label: pagesLabel(range.firstPage, range.lastPage) }));
  }
  return planAtText(settings.atText, pageCount, pageText, maxParts);
}

/** A new part at each page whose text contains `marker` (case-insensitive); the pages before the first one are a part of their own. */
async function planAtText(marker: string, pageCount: number, pageText: (page: number) => Promise<string>, maxParts: number): Promise<PartPlan[]> {
  const needle = marker.toLocaleLowerCase();
  const starts: { page: number; label: string }[] = [];
  for (let page = 1; page <= pageCount; page++) {
    const text = await pageText(page);
    const at = text.toLocaleLowerCase().indexOf(needle);
    if (at === -1) {
      if (page === 1) starts.push({ page, label: "" });
      continue;
    }
    if (starts.length === maxParts) throw tooMany(maxParts);
    const line = text.slice(text.lastIndexOf("\n", at) + 1, (text.indexOf("\n", at) + 1 || text.length + 1) - 1);
    const label = line.replace(/\s+/g, " ").trim().slice(0, MAX_LABEL_LENGTH);
    starts.push({ page, label });
  }
  return starts.map((start, index) => {
    const lastPage = (starts[index + 1]?.page ?? pageCount + 1) - 1;
    return { firstPage: start.page, lastPage, label: start.label === "" ? pagesLabel(start.page, lastPage) : start.label };
  });
}
