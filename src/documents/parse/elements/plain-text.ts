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
/** A sentence ends with one of these... */
const SENTENCE_ENDS = ".!?…:;,";
/** ...which closing quotes or brackets may follow. */
const CLOSERS = "\"'’”)]";
const MAX_TITLE_WORDS = 12;

/**
 * The elements of plain text, by the heuristics Unstructured documents for its text partitioner:
 * paragraphs split at blank lines; a paragraph whose lines all start with a list marker, or continue
 * the item above indented under it, is one ListItem per marker; a single short line that does not end like a sentence and holds letters is a
 * Title; an email address alone is an EmailAddress; text without letters is UncategorizedText;
 * the rest is NarrativeText.
 */
export function plainTextElements(text: string): Element[] {
  const elements: Element[] = [];
  for (const paragraph of text.split(/\r?\n[ \t]*\r?\n/)) {
    const lines = paragraph.split(/\r?\n/).filter((line) => line.trim() !== "");
    if (lines.length === 0) continue;
    const items = listItems(lines);
    if (items !== undefined) {
      for (const item of items) elements.push({ type: "ListItem", text: item });
      continue;
    }
    const joined = lines.map((line) => line.trim()).join("\n");
    elements.push(classifyText(joined, lines.length === 1));
  }
  return elements;
}

/**
 * A paragraph's list items (bullets dropped), when it is a list: its first line starts with a list
 * marker, and each line either does or continues the item above it, indented deeper than that
 * item's marker (as a README or an e-mail wraps a long item); a continuation joins its item after a space.
 */
function listItems(lines: readonly string[]): string[] | undefined {
  const items: string[] = [];
  let indent = -1;
  for (const line of lines) {
    if (LIST_MARKER.test(line)) {
      items.push(withoutBullet(line));
      indent = indentOf(line);
    } else if (indent >= 0 && indentOf(line) > indent) items[items.length - 1] += ` ${line.trim()}`;
    else return undefined;
  }
  return items;
}

/** The spaces and tabs a line starts with. */
function indentOf(line: string): number {
  let at = 0;
  for (let code = line.charCodeAt(0); code === 0x20 || code === 0x09; code = line.charCodeAt(++at));
  return at;
}

/** The type of one block of text that is not a list (see plainTextElements). */
export function classifyText(text: string, singleLine: boolean): Element {
  const trimmed = text.trim();
  if (trimmed.includes("@") && EMAIL.test(trimmed)) return { type: "EmailAddress", text: trimmed };
  if (!hasLetter(trimmed)) return { type: "UncategorizedText", text: trimmed };
  if (singleLine && isPossibleTitle(trimmed)) return { type: "Title", text: trimmed, level: 1 };
  return { type: "NarrativeText", text: trimmed };
}

/** Whether `text` holds a letter of any script; most text starts with an ASCII one, which says so without the Unicode class. */
function hasLetter(text: string): boolean {
  const first = text.charCodeAt(0) | 0x20;
  return (first >= 0x61 && first <= 0x7a) || /\p{L}/u.test(text);
}

/** Short, not ending like a sentence, starting with a letter or digit (Unstructured's is_possible_title, without its language model). */
function isPossibleTitle(text: string): boolean {
  return !endsLikeSentence(text) && /^[\p{L}\p{N}]/u.test(text) && wordCountAtMost(text, MAX_TITLE_WORDS);
}

function endsLikeSentence(text: string): boolean {
  let at = text.length - 1;
  while (at >= 0 && CLOSERS.includes(text[at]!)) at--;
  return at >= 0 && SENTENCE_ENDS.includes(text[at]!);
}

/** Whether `text` (trimmed) has at most `limit` words, counted only as far as the limit. */
function wordCountAtMost(text: string, limit: number): boolean {
  const spaces = /\s+/g;
  let words = 1;
  while (spaces.exec(text) !== null) if (++words > limit) return false;
  return true;
}
