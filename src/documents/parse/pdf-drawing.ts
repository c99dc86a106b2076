import { getResolvedPDFJS } from "unpdf";
import type { PdfRule } from "./elements/pdf-rules.ts";
import type { PdfDocument } from "./render-pdf.ts";

// What a PDF page draws besides its text, read from pdf.js's operator list (the page's content as
// pdf.js paints it): the ruling lines of tables, and the fonts its text is set in. The text layer
// (getTextContent) has neither: it names a run's font but not its weight, and has no paths.

type PdfPage = Awaited<ReturnType<PdfDocument["getPage"]>>;
type Matrix = [number, number, number, number, number, number];

/** The commands in a constructPath operation's path data (pdf.js's DrawOPS, which its API does not export). */
const MOVE_TO = 0;
const LINE_TO = 1;
const CURVE_TO = 2;
const QUADRATIC_CURVE_TO = 3;
const CLOSE_PATH = 4;
/** How far (points) a line's ends may differ across it and it still be horizontal or vertical. */
const ALIGNED = 0.5;
/** A filled rectangle at most this thick (points) and at least three times as long is a line. */
const THIN = 3;

/**
 * A page's operator list, with annotations left out (their appearances are not the page's content).
 * pdf.js keeps the list with the page, and the fonts it used with the document: the list is let go
 * once read.
 */
async function operatorList(page: PdfPage): Promise<{ fnArray: number[]; argsArray: unknown[] }> {
  const { AnnotationMode } = await getResolvedPDFJS();
  const list = await page.getOperatorList({ annotationMode: AnnotationMode.DISABLE });
  page.cleanup();
  return list;
}

/**
 * The horizontal and vertical lines a page strokes or fills, in points from the bottom-left corner
 * of the page as seen (its media box turned by its /Rotate): each straight segment of a stroked path, and the middle line of a thin filled
 * rectangle (how many programs draw a table's borders). Curves, clipping paths and shapes drawn in
 * patterns are not lines.
 */
export async function pageRules(page: PdfPage): Promise<PdfRule[]> {
  const { OPS, Util } = await getResolvedPDFJS();
  const strokes = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
  const fills = new Set<number>([OPS.fill, OPS.eoFill]);
  const viewport = page.getViewport({ scale: 1 });
  const { fnArray, argsArray } = await operatorList(page);
  const rules: PdfRule[] = [];
  // User space to the page as seen (turned by its /Rotate, from its top-left), then from its bottom-left.
  let matrix = Util.transform([1, 0, 0, -1, 0, viewport.height], viewport.transform) as Matrix;
  const saved: Matrix[] = [];
  for (let index = 0; index < fnArray.length; index++) {
    const op = fnArray[index]!;
    const args = argsArray[index] as unknown[] | null;
    if (op === OPS.save || op === OPS.paintFormXObjectBegin) saved.push(matrix);
    if (op === OPS.restore || op === OPS.paintFormXObjectEnd) matrix = saved.pop() ?? matrix;
    // A transform's arguments are the matrix; a form's are its matrix and its box.
    const applied = op === OPS.transform ? args : op === OPS.paintFormXObjectBegin ? args?.[0] : undefined;
    if (isMatrix(applied)) matrix = Util.transform(matrix, applied) as Matrix;
    if (op !== OPS.constructPath || args === null) continue;
    const paint = args[0] as number;
    if (!strokes.has(paint) && !fills.has(paint)) continue;
    // A path painted with nothing in it (a bare `S`) comes as [null].
    const paths = Array.isArray(args[1]) ? (args[1] as unknown[]) : [];
    for (const data of paths) {
      if (data === null || typeof data !== "object" || typeof (data as ArrayLike<number>).length !== "number") continue;
      for (const path of subpaths(data as ArrayLike<number>)) {
        // In place: pdf.js's applyTransform rewrites the point it is given.
        for (const point of path) Util.applyTransform(point, matrix);
        if (strokes.has(paint)) appendSegments(rules, path);
        else appendThinRectangle(rules, path);
      }
    }
  }
  return rules;
}

function isMatrix(value: unknown): value is Matrix {
  return Array.isArray(value) && value.length === 6 && value.every((entry) => typeof entry === "number" && Number.isFinite(entry));
}

/** The straight subpaths of a path: their points in order (a closed one ends where it started); a curve ends a subpath. */
function subpaths(data: ArrayLike<number>): [number, number][][] {
  const found: [number, number][][] = [];
  let current: [number, number][] = [];
  const end = () => {
    if (current.length >= 2) found.push(current);
    current = [];
  };
  for (let at = 0; at < data.length; ) {
    const command = data[at]!;
    if (command === MOVE_TO || command === LINE_TO) {
      if (command === MOVE_TO) end();
      current.push([data[at + 1]!, data[at + 2]!]);
      at += 3;
    } else if (command === CLOSE_PATH) {
      // A copy: the points are transformed in place.
      if (current.length > 0) current.push([...current[0]!]);
      end();
      at += 1;
    } else if (command === CURVE_TO || command === QUADRATIC_CURVE_TO) {
      end();
      at += command === CURVE_TO ? 7 : 5;
    } else break;
  }
  end();
  return found;
}

/** Each horizontal or vertical segment between consecutive points. */
function appendSegments(rules: PdfRule[], points: readonly [number, number][]): void {
  for (let index = 1; index < points.length; index++) {
    const [ax, ay] = points[index - 1]!;
    const [bx, by] = points[index]!;
    const horizontal = Math.abs(ay - by) <= ALIGNED && Math.abs(ax - bx) > ALIGNED;
    const vertical = Math.abs(ax - bx) <= ALIGNED && Math.abs(ay - by) > ALIGNED;
    if (horizontal) rules.push({ x0: Math.min(ax, bx), x1: Math.max(ax, bx), y0: (ay + by) / 2, y1: (ay + by) / 2 });
    if (vertical) rules.push({ x0: (ax + bx) / 2, x1: (ax + bx) / 2, y0: Math.min(ay, by), y1: Math.max(ay, by) });
  }
}

/** The middle line of a filled axis-aligned rectangle that is thin and long. */
function appendThinRectangle(rules: PdfRule[], points: readonly [number, number][]): void {
  if (points.length < 4 || points.length > 5) return;
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  // Axis-aligned: every corner on the box's edges.
  if (!points.every(([x, y]) => (Math.abs(x - x0) <= ALIGNED || Math.abs(x - x1) <= ALIGNED) && (Math.abs(y - y0) <= ALIGNED || Math.abs(y - y1) <= ALIGNED)))
    return;
  const width = x1 - x0;
  const height = y1 - y0;
  if (height <= THIN && width >= height * 3) rules.push({ x0, x1, y0: (y0 + y1) / 2, y1: (y0 + y1) / 2 });
  else if (width <= THIN && height >= width * 3) rules.push({ x0: (x0 + x1) / 2, x1: (x0 + x1) / 2, y0, y1 });
}

/**
 * The fonts, by pdf.js's name for them in the text layer, that are bold or black. pdf.js hands a
 * font's description (its PostScript name, its weight) to the document once a page's operator list
 * uses it: a font not yet described is looked up in the operator list of the first page using it,
 * so a document costs one more read of each page that brings in a new font, not of every page.
 */
export async function boldFonts(pdf: PdfDocument, firstPageOfFont: ReadonlyMap<string, number>): Promise<Set<string>> {
  const bold = new Set<string>();
  // A page is read once: a font pdf.js could not load is never described, however many such fonts it names.
  const read = new Set<number>();
  for (const [font, pageNumber] of firstPageOfFont) {
    const page = await pdf.getPage(pageNumber);
    if (!page.commonObjs.has(font) && !read.has(pageNumber)) {
      read.add(pageNumber);
      await operatorList(page);
    }
    if (!page.commonObjs.has(font)) continue;
    const described = page.commonObjs.get(font) as { name?: unknown; bold?: unknown; black?: unknown };
    if (described.bold === true || described.black === true || /heavy|black|bold/i.test(String(described.name ?? ""))) bold.add(font);
  }
  return bold;
}
