import type { Element } from "./elements/element.ts";
import { ocrElements } from "./ocr-elements.ts";
import type { PdfLayoutPage } from "./elements/pdf-layout.ts";
import { recognize } from "./ocr.ts";
import { imagePagesForOcr } from "./ocr-images.ts";
import { DEFAULT_OCR_LANGUAGES, type OcrLanguage } from "./ocr-languages.ts";
import { paintsImage, type PdfDocument, renderPageForOcr } from "./render-pdf.ts";
import { boldFonts, pageRules } from "./pdf-drawing.ts";
import { PageLines } from "./page-lines.ts";
import { boundText, MAX_TEXT_BYTES } from "./text.ts";
import { appendAll } from "../../platform/arrays.ts";

/** `auto`: OCR pages and images without a text layer; `always`: every page; `never`: none. */
export type OcrMode = "auto" | "always" | "never";

/** A parse node's OCR settings, as validated with its pipeline. */
export interface OcrSettings {
  ocr?: OcrMode;
  /** Installed languages, in the order Tesseract should prefer them; empty means DEFAULT_OCR_LANGUAGES. */
  languages?: readonly OcrLanguage[];
}

/** One page of a PDF or frame of an image, as the parse step reports it. */
export interface PageText {
  /** 1-based. */
  page: number;
  text: string;
  /** True when the text was read by OCR; false when it is the page's text layer. */
  ocr: boolean;
  /** OCR only: Tesseract's mean word confidence, 0-100. */
  confidence?: number;
  /** The page's size: PDF points for a PDF page, pixels for a picture. */
  width?: number;
  height?: number;
}

/** A parse node's settings for PDFs: OCR, and whether the pages' drawings are read for ruled tables. */
export interface PdfSettings extends OcrSettings {
  /** Read each text page's lines for tables drawn with ruling lines (a second read of the page). */
  rulingLines?: boolean;
}

/**
 * A PDF's pages, the positioned text of those read from their text layer (for layout analysis),
 * the fonts of that text that are bold, and the elements of the pages read by OCR.
 */
export interface PdfPages {
  pages: PageText[];
  layout: PdfLayoutPage[];
  boldFonts: Set<string>;
  ocrElements: Element[];
}

/**
 * A page that paints an image and whose text layer has fewer characters than this (spaces aside)
 * has no usable text layer: a scan with a stamped page number or a stray invisible character.
 */
const MIN_TEXT_LAYER_CHARS = 16;

/** A run whose baseline climbs or falls more than this per point across is not read as upright. */
const UPRIGHT_SLOPE = 0.05;

/**
 * Each PDF page's text: its text layer, or OCR of its rendering where the mode says so. The text
 * layer is read once per page: its runs joined as unpdf's extractText joins them, and kept with
 * their positions and sizes for the layout analysis.
 */
export async function pdfPages(pdf: PdfDocument, settings: PdfSettings): Promise<PdfPages> {
  const pages: PageText[] = [];
  const layout: PdfLayoutPage[] = [];
  const elements: Element[] = [];
  const firstPageOfFont = new Map<string, number>();
  for (let page = 1; page <= pdf.numPages; page++) {
    const proxy = await pdf.getPage(page);
    // The page as seen: its media box (whose origin need not be 0, 0) turned by its /Rotate.
    const viewport = proxy.getViewport({ scale: 1 });
    const size = { width: Math.round(viewport.width * 100) / 100, height: Math.round(viewport.height * 100) / 100 };
    // A run's baseline start on the page as seen, from its bottom-left corner.
    const seen = (x: number, y: number) => {
      const [left, fromTop] = viewport.convertToViewportPoint(x, y) as [number, number];
      return { x: left, y: viewport.height - fromTop };
    };
    // A run's direction on the page as seen (y up): only runs read left to right are laid out in lines.
    const [va, vb, vc, vd] = viewport.transform as number[];
    const direction = (transform: number[]) => {
      const dx = va! * transform[0]! + vc! * transform[1]!;
      const dy = -(vb! * transform[0]! + vd! * transform[1]!);
      const length = Math.hypot(dx, dy);
      if (length === 0 || (dx > 0 && Math.abs(dy) <= dx * UPRIGHT_SLOPE)) return {};
      return { direction: [dx / length, dy / length] as const };
    };
    const items = (await proxy.getTextContent()).items.filter((item) => "str" in item);
    const layer = items.map((item) => item.str + (item.hasEOL ? "\n" : "")).join("");
    if (!(await needsOcr(settings.ocr ?? "auto", layer, () => paintsImage(pdf, page)))) {
      pages.push({ page, text: layer, ocr: false, ...size });
      for (const { fontName } of items) if (!firstPageOfFont.has(fontName)) firstPageOfFont.set(fontName, page);
      layout.push({
        page,
        ...size,
        items: items.map(({ str, transform, width: itemWidth, fontName }) => ({
          str,
          ...seen(transform[4], transform[5]),
          width: itemWidth,
          size: Math.hypot(transform[2], transform[3]),
          font: fontName,
          ...direction(transform),
        })),
        ...(settings.rulingLines === true && { rules: await pageRules(proxy) }),
      });
      continue;
    }
    const { paragraphs, ...read } = await recognize(await renderPageForOcr(pdf, page), languagesOf(settings));
    pages.push({ page, ocr: true, ...size, ...read });
    appendAll(elements, ocrElements(page, paragraphs));
  }
  return { pages, layout, boldFonts: await boldFonts(pdf, firstPageOfFont), ocrElements: elements };
}

/** Each frame's OCR text (every TIFF page) and its elements, or nothing when the mode is `never`. */
export async function imagePages(format: string, bytes: Uint8Array, settings: OcrSettings): Promise<{ pages: PageText[]; elements: Element[] }> {
  if (settings.ocr === "never") return { pages: [], elements: [] };
  const pages: PageText[] = [];
  const elements: Element[] = [];
  for (const [index, image] of (await imagePagesForOcr(format, bytes)).entries()) {
    const { paragraphs, ...read } = await recognize(image, languagesOf(settings));
    pages.push({ page: index + 1, ocr: true, ...read });
    appendAll(elements, ocrElements(index + 1, paragraphs));
  }
  return { pages, elements };
}

/**
 * `auto` OCRs a page with no text at all (a scan, or text drawn as outlines), and a page with only a
 * few characters of text that paints an image; a short text page without pictures keeps its text.
 */
async function needsOcr(mode: OcrMode, layer: string, hasImage: () => Promise<boolean>): Promise<boolean> {
  if (mode !== "auto") return mode === "always";
  const characters = layer.replace(/\s+/g, "").length;
  if (characters === 0) return true;
  return characters < MIN_TEXT_LAYER_CHARS && (await hasImage());
}

function languagesOf(settings: OcrSettings): readonly OcrLanguage[] {
  return settings.languages !== undefined && settings.languages.length > 0 ? settings.languages : DEFAULT_OCR_LANGUAGES;
}

/**
 * The pages' texts within one MAX_TEXT_BYTES budget, like the document's text: once it is spent,
 * later pages keep their number and confidence but an empty text.
 */
export function boundPages(pages: PageText[]): PageText[] {
  let left = MAX_TEXT_BYTES;
  return pages.map((page) => {
    const bytes = Buffer.byteLength(page.text, "utf8");
    if (bytes <= left) {
      left -= bytes;
      return page;
    }
    const { text } = boundText(page.text, left);
    left = 0;
    return { ...page, text };
  });
}

/**
 * The pages with each one's text made of its elements' text in their reading order, joined by a
 * blank line (as Unstructured's text is its elements'): a text layer drawn right column first, or an
 * engine's text, reads as the elements do.
 */
export function pagesInReadingOrder(pages: readonly PageText[], elements: readonly Element[]): PageText[] {
  const texts = new Map<number, string[]>();
  for (const element of elements) {
    const page = texts.get(element.page ?? 0);
    if (page === undefined) texts.set(element.page ?? 0, [element.text]);
    else page.push(element.text);
  }
  // A paragraph's element joins its lines with spaces; the page's text keeps them apart, as drawn.
  return pages.map((page) => {
    const lines = new PageLines(page.text);
    return { ...page, text: (texts.get(page.page) ?? []).map((text) => lines.split(text).join("\n")).join("\n\n") };
  });
}

/** The document's text: its pages joined by a blank line. */
export function joinPages(pages: readonly PageText[]): string {
  return pages.map((page) => page.text).join("\n\n");
}

/** The numbers of the pages that were OCRed. */
export function ocrPageNumbers(pages: readonly PageText[]): number[] {
  return pages.filter((page) => page.ocr).map((page) => page.page);
}
