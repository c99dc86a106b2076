import { LRUCache } from "lru-cache";
import { CURRENCY } from "./normalize.ts";

/** Words of a text as labels compare them: letters and digits, lower case, accents aside. */
const WORD = /[\p{L}\p{N}]+/gu;
const ACCENTS = /\p{M}/gu;
/** The same, stepped through a line by matchLabel (its own object: `matchAll` copies a pattern's lastIndex). */
const LINE_WORD = /[\p{L}\p{N}]+/gu;

function foldWord(word: string): string {
  return word.normalize("NFD").replace(ACCENTS, "").toLowerCase();
}

/** A label's words, folded (a pipe's labels fold once per process, not once per run). */
const labelWords = new LRUCache<string, string[]>({ max: 500 });

export function wordsOf(label: string): string[] {
  const known = labelWords.get(label);
  if (known !== undefined) return known;
  const words = Array.from(label.matchAll(WORD), ([word]) => foldWord(word));
  labelWords.set(label, words);
  return words;
}

/** The most characters a label has (settings checks hold labels to 100): a longer text is no label. */
const MAX_LABEL_LENGTH = 100;

/** A text's words as one key: "Invoice No.:" and "invoice no" are the same label. */
export function labelKey(text: string): string {
  return Array.from(text.matchAll(WORD), ([word]) => foldWord(word)).join(" ");
}

/** What may come before a label in its text: bullets, numbering marks, spacing. */
const LEAD = /^[\s\-–—•*·#>]*$/u;
/** A currency or a rate between a label and its colon belongs to the label: "Total (EUR):", "MwSt. 7 %:", "Sales tax (8.25%):". */
const QUALIFIER = new RegExp(`^[\\s(]*(?:${CURRENCY}|\\d+(?:[.,]\\d+)?\\s*%)?[\\s)]*$`, "u");
const QUALIFIER_CURRENCY = new RegExp(CURRENCY, "u");
/** A label's text may go on with words up to a colon: "Customer ID:" for the label "Customer". */
const LABEL_GOES_ON = /^[^\d:]{0,40}:/u;

/** A label found at the start of a text line: the rest of the line after it is the value's place. */
export interface LabelMatch {
  /** The text after the label and its ":" (or "#", "."), up to the line's end: empty when the label ends its line. */
  rest: string;
}

/**
 * Where `label` starts `line` as the whole of the line's label part: its words first (case,
 * accents, punctuation and spacing aside), then the value. A label is never a word inside a
 * longer one: "Customer" does not start "Customer ID: 4711", nor "Client" "Numéro client: 88".
 * A currency or a rate may stand between a label and its colon ("MwSt. 7 %: 14,00 €"); the value
 * is then after the colon, with the currency ("Total (EUR): 1.334,56" is "1.334,56 EUR").
 */
export function matchLabel(line: string, label: string): LabelMatch | undefined {
  const words = wordsOf(label);
  if (words.length === 0) return undefined;
  LINE_WORD.lastIndex = 0;
  let end = 0;
  for (const word of words) {
    const found = LINE_WORD.exec(line);
    if (found === null || foldWord(found[0]) !== word) return undefined;
    if (end === 0 && !LEAD.test(line.slice(0, found.index))) return undefined;
    end = found.index + found[0].length;
  }
  const after = line.slice(end);
  const separator = /^[\s.:#]*/u.exec(after)![0];
  const rest = after.slice(separator.length).trim();
  if (separator.includes(":")) return { rest };
  const colon = rest.indexOf(":");
  if (colon === -1) return { rest };
  const qualifier = rest.slice(0, colon);
  if (QUALIFIER.test(qualifier)) {
    const currency = QUALIFIER_CURRENCY.exec(qualifier)?.[0];
    const value = rest.slice(colon + 1).trim();
    return { rest: currency === undefined ? value : `${value} ${currency}` };
  }
  return LABEL_GOES_ON.test(rest) ? undefined : { rest };
}

/**
 * Whether a text is itself a label, never a value: it ends with ":", or it is (or starts with,
 * before a colon) one of the node's labels.
 */
export function isLabelText(text: string, labels: ReadonlySet<string>): boolean {
  const trimmed = text.trim();
  if (trimmed.endsWith(":")) return true;
  if (trimmed.length > MAX_LABEL_LENGTH * 2) return false;
  if (labels.has(labelKey(trimmed))) return true;
  const colon = trimmed.indexOf(":");
  return colon > 0 && labels.has(labelKey(trimmed.slice(0, colon)));
}
