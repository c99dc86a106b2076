import { boundText, MAX_TEXT_BYTES } from "../text.ts";
import type { Element } from "./element.ts";
import { elementsToMarkdown } from "./markdown.ts";

/** What every format adds to its parse output: its text, elements and Markdown, each bounded. */
export interface StructuredText {
  text: string;
  elements: Element[];
  markdown: string;
  /** True when the text, the elements or the Markdown was cut at MAX_TEXT_BYTES. */
  truncated: boolean;
}

/**
 * The most elements a parse returns. The text budget alone lets a megabyte of one-letter list items
 * through as a million elements: 34 MB of JSON to store, and over a second on the event loop that
 * reads the parse's answer, copies it and writes it. 50,000 is a thousand pages of 50 paragraphs.
 */
export const MAX_ELEMENTS = 50_000;

/**
 * The elements whose text fits in `maxBytes` of UTF-8 together (a table counts its text and its
 * HTML), MAX_ELEMENTS at most; the first one past either budget and those after it are dropped.
 */
function boundElements(elements: readonly Element[], maxBytes = MAX_TEXT_BYTES): { elements: Element[]; truncated: boolean } {
  if (elements.length > MAX_ELEMENTS) {
    const kept = boundElements(elements.slice(0, MAX_ELEMENTS), maxBytes);
    return { elements: kept.elements, truncated: true };
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most documents fit without counting their bytes.
  let units = 0;
  for (const element of elements) units += element.text.length + (element.table?.html.length ?? 0);
  if (units * 3 <= maxBytes) return { elements: [...elements], truncated: false };
  let left = maxBytes;
  for (const [index, element] of elements.entries()) {
    left -= Buffer.byteLength(element.text, "utf8") + (element.table === undefined ? 0 : Buffer.byteLength(element.table.html, "utf8"));
    if (left < 0) return { elements: elements.slice(0, index), truncated: true };
  }
  return { elements: [...elements], truncated: false };
}

/** `text` and `elements` bounded, and the Markdown of the kept elements, bounded too. */
export function structured(text: string, elements: readonly Element[]): StructuredText {
  const boundedText = boundText(text);
  const bounded = boundElements(elements);
  const markdown = boundText(elementsToMarkdown(bounded.elements));
  return {
    text: boundedText.text,
    elements: bounded.elements,
    markdown: markdown.text,
    truncated: boundedText.truncated || bounded.truncated || markdown.truncated,
  };
}
