import type { Element } from "./element.ts";

/** A bullet (•, ·, ‣, -, *, –, —, ▪, o followed by a space) starting a line. */
const BULLET = /^\s*(?:[•·‣◦▪●○■□➢➤✓\-*–—]|o)\s+/;
/** A bullet or an enumerator (1. 1) a) iv.) starting a line: a list item. */
export const LIST_MARKER = /^\s*(?:[•·‣◦▪●○■□➢➤✓\-*–—](?=\s)|o(?=\s)|\(?(?:\d{1,3}|[a-z]|[ivxlc]{1,6})[.)](?=\s))/i;

/** A list item's text without its bullet; an enumerator is kept, as Unstructured keeps it (it carries the numbering). */
export function withoutBullet(text: string): string {
  return text.replace(BULLET, "").trim();
}
const EMAIL = /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/;
/** A sentence ends with one of these (closing quotes or brackets may follow). */
const SENTENCE_END = /[.!?…:;,]["'’”)\]]*$/;
const MAX_TITLE_WORDS = 12;

/**
 * The elements of plain text, by the heuristics Unstructured documents for its text partitioner:
 * paragraphs split at blank lines; a paragraph whose lines all start with a list marker is one
 * ListItem per line; a single short line that does not end like a sentence and holds letters is a
 * Title; an email address alone is an EmailAddress; text without letters is UncategorizedText;
 * the rest is NarrativeText.
 */
export function plainTextElements(text: string): Element[] {
  const elements: Element[] = [];
  for (const paragraph of text.split(/\r?\n[ \t]*\r?\n/)) {
    const lines = paragraph.split(/\r?\n/).filter((line) => line.trim() !== "");
    if (lines.length === 0) continue;
    if (lines.every((line) => LIST_MARKER.test(line))) {
      for (const line of lines) elements.push({ type: "ListItem", text: withoutBullet(line) });
      continue;
    }
    const joined = lines.map((line) => line.trim()).join("\n");
    elements.push(classifyText(joined, lines.length === 1));
  }
  return elements;
}

/** The type of one block of text that is not a list (see plainTextElements). */
export function classifyText(text: string, singleLine: boolean): Element {
  const trimmed = text.trim();
  if (EMAIL.test(trimmed)) return { type: "EmailAddress", text: trimmed };
  if (!/\p{L}/u.test(trimmed)) return { type: "UncategorizedText", text: trimmed };
  if (singleLine && isPossibleTitle(trimmed)) return { type: "Title", text: trimmed, level: 1 };
  return { type: "NarrativeText", text: trimmed };
}

/** Short, not ending like a sentence, starting with a letter or digit (Unstructured's is_possible_title, without its language model). */
function isPossibleTitle(text: string): boolean {
  const words = text.split(/\s+/).filter((word) => word !== "");
  return words.length <= MAX_TITLE_WORDS && !SENTENCE_END.test(text) && /^[\p{L}\p{N}]/u.test(text);
}
