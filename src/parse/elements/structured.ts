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
 * The elements whose text fits in `maxBytes` of UTF-8 together (a table counts its text and its
 * HTML); the first one past the budget and those after it are dropped.
 */
function boundElements(elements: readonly Element[], maxBytes = MAX_TEXT_BYTES): { elements: Element[]; truncated: boolean } {
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
