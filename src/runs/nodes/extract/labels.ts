import { LRUCache } from "lru-cache";
import { CURRENCY, isMonthName } from "../normalize.ts";

/** Words of a text as labels compare them: letters and digits, lower case, accents aside; "#" is a word ("Invoice #"). */
const WORD = /[\p{L}\p{N}]+|#/gu;
const ACCENTS = /\p{M}/gu;

function foldWord(word: string): string {
  return word.normalize("NFD").replace(ACCENTS, "").toLowerCase();
}

/** A word of a line: folded, and where it is. */
interface LineWord {
  word: string;
  start: number;
  end: number;
}

function wordsIn(text: string): LineWord[] {
  return Array.from(text.matchAll(WORD), (found) => ({ word: foldWord(found[0]), start: found.index, end: found.index + found[0].length }));
}

/** A label's words, folded (a pipe's labels fold once per process, not once per run). */
const labelWords = new LRUCache<string, string[]>({ max: 500 });

function wordsOf(label: string): string[] {
  const known = labelWords.get(label);
  if (known !== undefined) return known;
  const words = Array.from(label.matchAll(WORD), ([word]) => foldWord(word));
  labelWords.set(label, words);
  return words;
}

/** The most characters a label has (settings checks hold labels to 100): a longer text is no label. */
const MAX_LABEL_LENGTH = 100;
/**
 * How much of a line's rest a value is looked for in: a value is short, and a document's long line
 * after a label is not read word by word for each label met on it.
 */
const MAX_VALUE_LENGTH = 400;

/** A text's words as one key: "Invoice No.:" and "invoice no" are the same label. */
function labelKey(text: string): string {
  return Array.from(text.matchAll(WORD), ([word]) => foldWord(word)).join(" ");
}

/** What may come before a label that starts its line: bullets, numbering marks, spacing. */
const LEAD = /^[\s\-–—•*·#>]*$/u;
/** A currency or a rate after a label belongs to it: "Total (EUR):", "MwSt. 7 %", "Sales tax (8.25%):". */
const QUALIFIER = new RegExp(`^[\\s(]*(?:${CURRENCY}|\\d+(?:[.,]\\d+)?\\s*%)?[\\s)]*$`, "u");
const QUALIFIER_CURRENCY = new RegExp(CURRENCY, "u");
const CURRENCY_WORD = new RegExp(`^${CURRENCY}$`, "u");
/** A label's text may go on with words up to a colon: "Customer ID:" for the label "Customer". */
const LABEL_GOES_ON = /^[^\d:]{0,40}:/u;
/** What may stand between a label and its value: spacing, ".", ":", "#", "°" ("N°"). */
const SEPARATOR = /^[\s.:#°]*/u;
/** A word of two or more letters at a text's start. */
const LEADING_WORD = /^\p{L}{2,}/u;
/** A single word directly followed by a colon ("BIC:", "Tel.:"): another label on the line, where a value ends. */
const WORD_COLON = /(?:^|\s)\p{L}[\p{L}.-]*:(?=\s|$)/u;

/** A label found in a text line, and the value's place after it. */
export interface LabelMatch {
  /** The text after the label and its ":" (or "#", "."), up to the line's end or the next label on the line. */
  rest: string;
  /** Whether the label ends its line (nothing after it, or only a currency or a rate): its value is then beside or below it. */
  endsLine: boolean;
  /** A currency written with the label ("Total (EUR)"), for a value beside or below it written without one. */
  currency: string | undefined;
}

/** How one node's labels are found in a document's lines: each line's words are read once per step. */
export class LabelReader {
  readonly #lines = new Map<string, LineWord[]>();
  /** Texts known to be labels or not: a document repeats its texts (a table's cells, its column headers). */
  readonly #isLabel = new Map<string, boolean>();
  /** Every label of the node's fields, as label keys: such a text is never a value. */
  readonly #labels: ReadonlySet<string>;
  /** Every label's words, to find where the next label on a line starts, and whether a text is all labels. */
  readonly #labelWords: readonly string[][];

  constructor(labels: readonly string[]) {
    this.#labels = new Set(labels.map(labelKey));
    this.#labelWords = labels.map(wordsOf).filter((words) => words.length > 0);
  }

  /** A row's line's words, read once per step (a line is matched against every label). */
  #lineWords(line: string): LineWord[] {
    let words = this.#lines.get(line);
    if (words === undefined) {
      words = wordsIn(line);
      this.#lines.set(line, words);
    }
    return words;
  }

  /** Whether `words` match `line`'s words from `at`, and end with a colon (after optional "." or spaces) when `colon`. */
  #matchesAt(line: string, lineWords: LineWord[], at: number, words: readonly string[], colon: boolean): boolean {
    if (at + words.length > lineWords.length) return false;
    for (let index = 0; index < words.length; index++) if (lineWords[at + index]!.word !== words[index]) return false;
    return !colon || /^[\s.#°]*:/u.test(line.slice(lineWords[at + words.length - 1]!.end));
  }

  /**
   * A value's text ends at the end of its line or where another label starts on it: one of the
   * node's labels followed by a colon, or a single word with a colon ("BIC:"). "INV-7 Date: 3 Nov
   * 2026" is "INV-7" when "Date" is a label.
   */
  valueText(whole: string): string {
    const text = whole.length > MAX_VALUE_LENGTH ? whole.slice(0, MAX_VALUE_LENGTH) : whole;
    const words = wordsIn(text);
    for (let at = 0; at < words.length; at++) {
      if (this.#labelWords.some((label) => this.#matchesAt(text, words, at, label, true))) return text.slice(0, words[at]!.start).trim();
    }
    const colon = WORD_COLON.exec(text);
    return colon === null ? text.trim() : text.slice(0, colon.index).trim();
  }

  /**
   * Where `label` is in `line` as the whole of a label part (case, accents, punctuation and
   * spacing aside): at the line's start, or after a label and its value ("Bank: X IBAN: ..."). A
   * label is never a word inside a longer one: "Customer" is not in "Customer ID: 4711", nor
   * "Client" in "Numéro client: 88". A currency or a rate may stand between a label and its
   * colon ("MwSt. 7 %: 14,00 €"); the value is then after the colon, with the currency ("Total
   * (EUR): 1.334,56" is "1.334,56 EUR"). For a number, date or amount, the rest must not start
   * with another word ("Total HT 1.000,00" is no "Total"; a currency or a month may).
   */
  match(line: string, label: string, typed: boolean): LabelMatch | undefined {
    const words = wordsOf(label);
    if (words.length === 0) return undefined;
    const lineWords = this.#lineWords(line);
    const firstColon = line.indexOf(":");
    for (let at = 0; at < lineWords.length; at++) {
      if (lineWords[at]!.word !== words[0]) continue;
      // At the line's start (after bullets), or after a colon: another label's value before it.
      const start = lineWords[at]!.start;
      const placed = at === 0 ? LEAD.test(line.slice(0, start)) : firstColon !== -1 && firstColon < start;
      if (!placed || !this.#matchesAt(line, lineWords, at, words, false)) continue;
      const end = lineWords[at + words.length - 1]!.end;
      const found = this.#after(line.slice(end, end + MAX_VALUE_LENGTH), typed);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** The value's place after a label (see match), or undefined when the label part goes on past the label. */
  #after(after: string, typed: boolean): LabelMatch | undefined {
    const separator = SEPARATOR.exec(after)![0];
    let rest = after.slice(separator.length);
    let currency: string | undefined;
    if (!separator.includes(":")) {
      const colon = rest.indexOf(":");
      const qualifier = colon === -1 ? rest : rest.slice(0, colon);
      if (QUALIFIER.test(qualifier)) {
        currency = QUALIFIER_CURRENCY.exec(qualifier)?.[1];
        rest = colon === -1 ? "" : rest.slice(colon + 1);
      } else if (colon !== -1 && LABEL_GOES_ON.test(rest)) return undefined;
    }
    if (typed && !startsWithValue(rest)) return undefined;
    const value = this.valueText(rest);
    const withCurrency = currency === undefined || value === "" ? value : `${value} ${currency}`;
    return { rest: withCurrency, endsLine: value === "", currency };
  }

  /**
   * Whether a text is itself a label, never a value: it ends with ":", it starts with one of the
   * node's labels and a colon, or it is one or more of them ("Invoice date Due date", a header
   * row's cells on one line).
   */
  isLabel(text: string): boolean {
    let known = this.#isLabel.get(text);
    if (known === undefined) {
      known = this.#readIsLabel(text);
      this.#isLabel.set(text, known);
    }
    return known;
  }

  #readIsLabel(text: string): boolean {
    const trimmed = text.trim();
    if (trimmed.endsWith(":")) return true;
    if (trimmed.length > MAX_LABEL_LENGTH * 4) return false;
    const colon = trimmed.indexOf(":");
    if (colon > 0 && this.#labels.has(labelKey(trimmed.slice(0, colon)))) return true;
    const words = wordsIn(trimmed);
    // Which word positions a run of whole labels reaches from the start.
    const reached = new Uint8Array(words.length + 1);
    reached[0] = 1;
    for (let at = 0; at < words.length; at++) {
      if (reached[at] === 0) continue;
      for (const label of this.#labelWords) if (this.#matchesAt(trimmed, words, at, label, false)) reached[at + label.length] = 1;
    }
    return words.length > 0 && reached[words.length] === 1;
  }
}

/** Whether a number, date or amount may start `text`: it does not start with a word other than a currency code or a month. */
function startsWithValue(text: string): boolean {
  const word = LEADING_WORD.exec(text)?.[0];
  return word === undefined || CURRENCY_WORD.test(word) || isMonthName(word);
}
