/** The types an extracted value is normalized to. */
export type ValueType = "string" | "number" | "date" | "money" | "boolean";

/** How an all-numeric date is read. */
export type DateOrder = "dmy" | "mdy" | "ymd";

export interface Money {
  amount: number;
  currency: string | undefined;
}

/**
 * A number as written in any common convention: "1.234,56", "1,234.56", "1 234,56" and "1'234.56"
 * are all 1234.56. When both separators occur the last one is the decimal point; one kind alone is a
 * thousands separator when it occurs more than once or is followed by exactly three digits after a
 * non-zero integer part ("1.500" is 1500, "0.500" is 0.5). "(12.50)" and "12.50-" are negative.
 */
const NUMBER_TEXT = /[-−(]?\d(?:[\d.,'’]|[ \u00a0\u202f](?=\d{3}\b))*(?:[)-])?/u;

/**
 * `text` without the characters at its end that `character` matches (a pattern of one character),
 * in linear time. Not `text.replace(/[.,]+$/, "")`: that tries every start in a long run of them
 * and fails at each, quadratic in the run's length (40,000 dots before a letter took 1.4 s).
 */
function withoutTrailing(text: string, character: RegExp): string {
  let end = text.length;
  while (end > 0 && character.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

export function parseNumber(text: string): number | undefined {
  const match = NUMBER_TEXT.exec(text);
  if (match === null) return undefined;
  let written = match[0];
  // A parenthesis is a minus sign only around the whole number: "(12.50)", not "(8.25" of "(8.25%)".
  const negative = /^[-−]|-$/.test(written) || /^\(.*\)$/.test(written);
  written = withoutTrailing(written.replace(/[-−()]/g, "").replace(/[ \u00a0\u202f'’]/g, ""), /[.,]/);
  const lastDot = written.lastIndexOf(".");
  const lastComma = written.lastIndexOf(",");
  let decimal: string | undefined;
  if (lastDot !== -1 && lastComma !== -1) decimal = lastDot > lastComma ? "." : ",";
  else if (lastDot !== -1 || lastComma !== -1) {
    const separator = lastDot !== -1 ? "." : ",";
    const [integer = "", ...rest] = written.split(separator);
    const thousands = rest.length > 1 || (rest[0]!.length === 3 && !/^0*$/.test(integer));
    decimal = thousands ? undefined : separator;
  }
  const [integer = "", fraction = ""] = decimal === undefined ? [written] : written.split(decimal);
  const digits = `${integer.replace(/[.,]/g, "")}${fraction === "" ? "" : `.${fraction.replace(/[.,]/g, "")}`}`;
  const value = Number(digits);
  if (!Number.isFinite(value)) return undefined;
  return negative ? -value : value;
}

/** Month names and abbreviations in English, German, French, Spanish, Italian and Dutch, lowercase, without a final dot. */
const MONTHS: Record<string, number> = {};
const MONTH_NAMES = [
  ["january", "jan", "januar", "jän", "janvier", "janv", "enero", "ene", "gennaio", "gen", "januari"],
  ["february", "feb", "februar", "février", "fevrier", "févr", "fevr", "febrero", "febbraio", "februari"],
  ["march", "mar", "märz", "maerz", "mär", "mars", "marzo", "maart", "mrt"],
  ["april", "apr", "avril", "avr", "abril", "abr", "aprile"],
  ["may", "mai", "mayo", "maggio", "mag", "mei"],
  ["june", "jun", "juni", "juin", "junio", "giugno", "giu"],
  ["july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug"],
  ["august", "aug", "août", "aout", "agosto", "ago", "augustus"],
  ["september", "sep", "sept", "septembre", "septiembre", "setiembre", "settembre", "set"],
  ["october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott"],
  ["november", "nov", "novembre", "noviembre"],
  ["december", "dec", "dezember", "dez", "décembre", "decembre", "déc", "diciembre", "dic", "dicembre"],
];
MONTH_NAMES.forEach((names, index) => {
  for (const name of names) MONTHS[name] = index + 1;
});
/** Whether a word is a month's name or abbreviation ("Nov", "März"). */
export function isMonthName(word: string): boolean {
  return MONTHS[word.toLowerCase()] !== undefined;
}

const MONTH_WORD = "([a-zäéû]{3,10})\\.?";

const ISO_DATE = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/;
const NUMERIC_DATE = /\b(\d{1,4})[./-](\d{1,2})[./-](\d{1,4})\b/;
/** "3 Nov 2026", "3. November 2026", "3 de noviembre de 2026" (Spanish joins them with "de"). */
const DAY_MONTH_NAME = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\.?[\\s-]+(?:de\\s+)?${MONTH_WORD}[\\s,-]+(?:del?\\s+)?(\\d{4})\\b`, "iu");
const MONTH_NAME_DAY = new RegExp(`\\b${MONTH_WORD}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "iu");

function isoDate(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1) return undefined;
  return `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

/** A two-digit year is in this century up to 69 years ahead of 2000, like most date libraries read it. */
function fullYear(year: string): number {
  const value = Number(year);
  return year.length <= 2 ? (value < 70 ? 2000 + value : 1900 + value) : value;
}

/**
 * The first date in `text` as "YYYY-MM-DD": ISO dates, "3 Nov 2026", "3. November 2026",
 * "November 3, 2026", and all-numeric dates ("03/11/2026", "03.11.26") read in the given order.
 */
export function parseDate(text: string, order: DateOrder): string | undefined {
  const iso = ISO_DATE.exec(text);
  if (iso !== null) return isoDate(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const named = DAY_MONTH_NAME.exec(text);
  if (named !== null) {
    const month = MONTHS[named[2]!.toLowerCase()];
    if (month !== undefined) return isoDate(Number(named[3]), month, Number(named[1]));
  }
  const monthFirst = MONTH_NAME_DAY.exec(text);
  if (monthFirst !== null) {
    const month = MONTHS[monthFirst[1]!.toLowerCase()];
    if (month !== undefined) return isoDate(Number(monthFirst[3]), month, Number(monthFirst[2]));
  }
  const numeric = NUMERIC_DATE.exec(text);
  if (numeric === null) return undefined;
  const [, a = "", b = "", c = ""] = numeric;
  if (order === "ymd") return a.length === 4 ? isoDate(Number(a), Number(b), Number(c)) : undefined;
  if (c.length !== 2 && c.length !== 4) return undefined;
  const [day, month] = order === "dmy" ? [a, b] : [b, a];
  return isoDate(fullYear(c), Number(month), Number(day));
}

/** Currency signs and the ISO 4217 code each stands for ("$" is taken as USD). */
const CURRENCY_SIGNS: Record<string, string> = { "€": "EUR", $: "USD", "£": "GBP", "¥": "JPY", "₹": "INR" };
/** Codes recognised beside an amount; three capital letters elsewhere in a line are too often not one. */
const CURRENCY_CODES = "EUR|USD|GBP|CHF|JPY|CNY|INR|CAD|AUD|NZD|SEK|NOK|DKK|PLN|CZK|HUF|RON|BGN|HRK|TRY|RUB|UAH|BRL|MXN|ZAR|SGD|HKD|KRW|ILS|AED|SAR";
/** A currency code or sign beside an amount, as a group. */
export const CURRENCY = `(${CURRENCY_CODES}|€|\\$|£|¥|₹)`;
const MONEY_BEFORE = new RegExp(`${CURRENCY}\\s*(${NUMBER_TEXT.source})`, "u");
const NUMBER_RUN = new RegExp(NUMBER_TEXT.source, "gu");
const CURRENCY_AFTER = new RegExp(`\\s*${CURRENCY}`, "uy");

/**
 * The first amount followed by its currency ("12,50 €", "3 400 EUR"): what `/(number)\s*currency/u`
 * finds, in linear time. That expression tries every start in a run of digits and, at each, every
 * shorter end: quadratic in the run (0.4 ms for 256 digits, 9 s for 40,000). A currency cannot
 * follow a shorter end of a number, nor does a later start end elsewhere, so each run is tried
 * once at its end. A run's final "-" may instead begin the next number ("12-5 EUR" is -5 EUR).
 */
function moneyAfter(text: string): { index: number; sign: string; number: string } | undefined {
  NUMBER_RUN.lastIndex = 0;
  for (let run = NUMBER_RUN.exec(text); run !== null; run = NUMBER_RUN.exec(text)) {
    const end = run.index + run[0].length;
    CURRENCY_AFTER.lastIndex = end;
    const currency = CURRENCY_AFTER.exec(text);
    if (currency !== null) return { index: run.index, sign: currency[1]!, number: run[0] };
    if (run[0].endsWith("-")) NUMBER_RUN.lastIndex = end - 1;
  }
  return undefined;
}

function currencyCode(sign: string): string {
  return CURRENCY_SIGNS[sign] ?? sign;
}

/** A minus sign just before an amount's currency. */
const MINUS_BEFORE = /[-−]\s?$/u;
/** A number run's end followed by a percent sign: a rate, not an amount. */
const PERCENT_AFTER = /\s*%/y;
/** Two decimals at a number's end: "12.50", "1.334,56", "(12.50)", "12,50-". */
const TWO_DECIMALS = /[.,]\d{2}\)?-?$/;
/** What may stand beside a bare number that is a whole amount: signs, currency signs, parentheses, spacing. */
const AMOUNT_BESIDE = new RegExp(`^(?:\\s|[-−()]|${CURRENCY})*$`, "u");

/**
 * The amount of a text without a currency: the first number with two decimals that is not a rate
 * ("7 %"), else a bare number when it is all the text holds ("1334", "(40)"). A number among words
 * is an identifier or a reference ("article 262 ter", "GB 123 4567 89"), not an amount.
 */
function bareAmount(text: string): number | undefined {
  const runs: { index: number; number: string }[] = [];
  NUMBER_RUN.lastIndex = 0;
  for (let run = NUMBER_RUN.exec(text); run !== null; run = NUMBER_RUN.exec(text)) {
    PERCENT_AFTER.lastIndex = run.index + run[0].length;
    if (!PERCENT_AFTER.test(text)) runs.push({ index: run.index, number: run[0] });
  }
  const decimal = runs.find(({ number }) => TWO_DECIMALS.test(number));
  if (decimal !== undefined) return parseNumber(decimal.number);
  const [only] = runs;
  if (runs.length !== 1 || only === undefined) return undefined;
  const beside = text.slice(0, only.index) + text.slice(only.index + only.number.length);
  return AMOUNT_BESIDE.test(beside) ? parseNumber(only.number) : undefined;
}

/**
 * An amount and its currency: "EUR 12,50", "12.50 €", "$1,200.00"; without a currency, see
 * bareAmount, with `defaultCurrency`.
 */
export function parseMoney(text: string, defaultCurrency: string | undefined): Money | undefined {
  const before = MONEY_BEFORE.exec(text);
  const after = moneyAfter(text);
  // The earlier of the two readings: "EUR 12,50 (USD 14)" is in euros.
  const found = before !== null && (after === undefined || before.index <= after.index) ? { sign: before[1]!, number: before[2]!, index: before.index } : after;
  if (found !== undefined) {
    const amount = parseNumber(found.number);
    if (amount === undefined) return undefined;
    // A minus sign before the currency: "-£12.00", "- € 5".
    const negative = found.index > 0 && MINUS_BEFORE.test(text.slice(Math.max(0, found.index - 3), found.index));
    return { amount: negative ? -Math.abs(amount) : amount, currency: currencyCode(found.sign) };
  }
  const amount = bareAmount(text);
  return amount === undefined ? undefined : { amount, currency: defaultCurrency };
}

const TRUE_WORDS = new Set(["yes", "true", "y", "1", "x", "ja", "oui", "checked", "☑", "☒", "✓", "✔"]);
const FALSE_WORDS = new Set(["no", "false", "n", "0", "nein", "non", "unchecked", "☐"]);

export function parseBoolean(text: string): boolean | undefined {
  const word = withoutTrailing(text.trim().split(/\s+/)[0]?.toLowerCase() ?? "", /[.,;:!]/);
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

/** A string value: the text with surrounding space and separators trimmed; empty is no value. */
function parseString(text: string): string | undefined {
  const value = withoutTrailing(text, /[\s,;]/u)
    .replace(/^[\s:#.\-–—]+/u, "")
    .trim();
  return value === "" ? undefined : value;
}

/**
 * How much of a text a number, date, amount or yes/no is read from: its start. Such a value is
 * short, and a candidate is often the rest of a long line; reading only its start keeps each
 * candidate's work small, whatever a document holds.
 */
const MAX_TYPED_TEXT = 256;

/** The value of `text` as `type`, or undefined when the text holds none. */
export function normalizeValue(text: string, type: ValueType, options: { dateOrder: DateOrder; currency: string | undefined }): unknown {
  if (type === "string") return parseString(text);
  const start = text.length > MAX_TYPED_TEXT ? text.slice(0, MAX_TYPED_TEXT) : text;
  switch (type) {
    case "number":
      return parseNumber(start);
    case "date":
      return parseDate(start, options.dateOrder);
    case "money": {
      const money = parseMoney(start, options.currency);
      if (money === undefined) return undefined;
      return money.currency === undefined ? { amount: money.amount } : money;
    }
    case "boolean":
      return parseBoolean(start);
  }
}
