import type { OcrParagraph } from "./ocr.ts";
import type { Element } from "./elements/element.ts";
import { plainTextElements } from "./elements/plain-text.ts";

/**
 * The elements of a page read by OCR: each paragraph the engine found, typed by the same rules as
 * plain text (a short line alone is a Title, marker lines are ListItems, …), with the page and the
 * paragraph's box.
 */
export function ocrElements(page: number, paragraphs: readonly OcrParagraph[]): Element[] {
  return paragraphs.flatMap(({ text, bbox }) => plainTextElements(text).map((element) => ({ ...element, page, bbox })));
}
