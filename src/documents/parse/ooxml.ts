import { posix } from "node:path";
import type { Element } from "./elements/element.ts";
import { slideElements } from "./elements/slides.ts";
import { MAX_SHEETS_READ, type Sheet, sheetRows, workbookElements } from "./elements/spreadsheet.ts";
import { builtInDateFormat, type CellDates, type DateFormat, dateFormat } from "./elements/spreadsheet-dates.ts";
import { TableBudget } from "./elements/table.ts";
import { decodeEntities, MAX_TEXT_BYTES } from "./text.ts";
import { packageReader, readParts } from "./zip.ts";

export interface Workbook {
  /** Sheet names in workbook order. */
  sheetNames: string[];
  /** The shared strings, then each worksheet's inline strings, one per line. */
  text: string;
  /** Each sheet's name and used range, in workbook order (see workbookElements). */
  elements: Element[];
}

const WORKBOOK = "xl/workbook.xml";
/**
 * The workbook's shared strings and styles parts: where Excel writes them, and the relationship type
 * (transitional or strict: `.../relationships/styles`) by which a workbook may name another (see partOfType).
 */
const SHARED_STRINGS = { path: "xl/sharedStrings.xml", type: /\/relationships\/sharedStrings$/ };
const STYLES = { path: "xl/styles.xml", type: /\/relationships\/styles$/ };
const WORKBOOK_RELATIONSHIPS = "xl/_rels/workbook.xml.rels";
const WORKSHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;
/** The relationship type of a worksheet part, which a workbook may keep elsewhere than WORKSHEET's paths. */
const WORKSHEET_RELATIONSHIP = /\/relationships\/worksheet$/;

/** The sheet names, the text and the elements of an xlsx package. */
export function readWorkbook(bytes: Uint8Array): Workbook {
  // The relationships say which parts hold the shared strings and the styles, so they are read first;
  // the other parts get what is left of the package's budget (both reads together inflate no more than one would).
  const readPart = packageReader(bytes);
  const first = readPart((name) => name === WORKBOOK || name === WORKBOOK_RELATIONSHIPS);
  const workbook = first.get(WORKBOOK);
  if (workbook === undefined) throw new Error(`it has no ${WORKBOOK}`);
  const relationships = workbookRelationships(first.get(WORKBOOK_RELATIONSHIPS) ?? "");
  const sharedStrings = partOfType(relationships, SHARED_STRINGS);
  const styles = partOfType(relationships, STYLES);
  const elsewhere = new Set(
    relationships.filter(({ type, target }) => WORKSHEET_RELATIONSHIP.test(type) && !WORKSHEET.test(target)).map(({ target }) => target),
  );
  const rest = readPart((name) => name === sharedStrings || name === styles || WORKSHEET.test(name) || elsewhere.has(name));
  const parts = new Map([...first, ...rest]);
  // Worksheets by number, then those the relationships keep elsewhere, in their order.
  const worksheets = [...numbered(parts, WORKSHEET), ...[...elsewhere].flatMap((name) => parts.get(name) ?? [])];
  const sheetTags = [...workbook.matchAll(/<(?:\w+:)?sheet\s[^<>]*>/g)].map((match) => match[0]);
  const sheetNames = sheetTags.map((tag) => attribute(tag, "name") ?? "");
  // One pass from tags to texts: no array of the items' raw bodies beside them (millions in a hostile workbook).
  const sharedItems = Array.from(elementBodies(parts.get(sharedStrings) ?? "", "si"), stringItemText);
  const inlineItems = worksheets.flatMap((sheet) => Array.from(elementBodies(sheet, "is"), stringItemText));
  const text = [...sharedItems.filter((item) => item !== ""), ...inlineItems.filter((item) => item !== "")];
  const dates = cellDates(parts.get(styles) ?? "", workbook);
  const targets = new Map(relationships.map(({ id, target }) => [id, target]));
  const sheets: Sheet[] = [];
  // Each worksheet part is read once, however many sheets name it (one part named 125 times took
  // 12 s and 1.3 GB); once the sheets read hold more text than the output keeps, none after them is read.
  const read = new Set<string>();
  let characters = 0;
  for (const [index, tag] of sheetTags.slice(0, MAX_SHEETS_READ).entries()) {
    if (characters > MAX_TEXT_BYTES) break;
    const target = targets.get(attribute(tag, "r:id") ?? "") ?? "";
    const xml = parts.get(target);
    if (xml === undefined || read.has(target)) continue;
    read.add(target);
    const rows = sheetRows(xml, sharedItems, dates);
    for (const row of rows) for (const cell of row) characters += cell.length;
    sheets.push({ number: index + 1, name: sheetNames[index]!, rows });
  }
  return { sheetNames, text: text.join("\n"), elements: workbookElements(sheets) };
}

/** Cell styles read at most: Excel keeps 64,000 a workbook, and a styles part listing millions costs no more than this. */
const MAX_CELL_STYLES = 65_536;
/** Custom number formats read at most (Excel keeps about 250 a workbook). */
const MAX_NUMBER_FORMATS = 10_000;
/**
 * A `<numFmt>` tag longer than this shows no date, and its code is not decoded (an 18 MB code of
 * `&quot;`s took 2 to 4 s): Excel's longest code, 255 characters, fits in it even all written as references.
 */
const MAX_NUMBER_FORMAT_TAG = 4000;

/**
 * Which cell styles show dates, and the workbook's date system: a date cell is a number whose
 * style's number format is a date or time format, built in or custom (`<numFmt>`, which may also
 * redefine a built-in id; the first definition of an id counts). Each custom format is classified
 * once, however many styles use it.
 */
function cellDates(styles: string, workbook: string): CellDates {
  const properties = /<(?:\w+:)?workbookPr\b[^<>]*>/.exec(workbook)?.[0] ?? "";
  const date1904 = ["1", "true"].includes(attribute(properties, "date1904") ?? "");
  const custom = new Map<number, DateFormat | undefined>();
  let read = 0;
  for (const [tag] of styles.matchAll(/<(?:\w+:)?numFmt\s[^<>]*>/g)) {
    if (read++ >= MAX_NUMBER_FORMATS) break;
    const id = Number(attribute(tag, "numFmtId"));
    const code = tag.length > MAX_NUMBER_FORMAT_TAG ? "" : (attribute(tag, "formatCode") ?? "");
    if (!custom.has(id)) custom.set(id, dateFormat(code));
  }
  const format = (id: number) => (custom.has(id) ? custom.get(id) : builtInDateFormat(id));
  return { styles: cellStyleNumberFormats(styles).map(format), date1904 };
}

/**
 * The number format id of each cell style: the `<xf>`s of `<cellXfs>` in order (a cell's `s`
 * indexes them; those of `<cellStyleXfs>` are named styles, which no cell uses directly).
 */
function cellStyleNumberFormats(styles: string): number[] {
  const start = /<(?:\w+:)?cellXfs\b/.exec(styles);
  if (start === null) return [];
  const tags = /<(\/?)(?:\w+:)?(xf|cellXfs)\b[^<>]*>/g;
  tags.lastIndex = start.index + start[0].length;
  const ids: number[] = [];
  while (ids.length < MAX_CELL_STYLES) {
    const tag = tags.exec(styles);
    if (tag === null || tag[2] === "cellXfs") break;
    if (tag[1] === "") ids.push(Number(attribute(tag[0], "numFmtId") ?? 0));
  }
  return ids;
}

/** One relationship of a relationships part: its id, its type and its target as a part name. */
interface Relationship {
  id: string;
  type: string;
  target: string;
}

/**
 * The relationships of the workbook part (`xl/workbook.xml`), whose relative targets resolve
 * against `xl/` and absolute ones against the package's root (`/xl/other.xml` is `xl/other.xml`).
 */
function workbookRelationships(xml: string): Relationship[] {
  const relationships: Relationship[] = [];
  for (const [tag] of xml.matchAll(/<(?:\w+:)?Relationship\s[^<>]*>/g)) {
    const id = attribute(tag, "Id");
    const target = attribute(tag, "Target");
    // An external target (a linked file, a URL) names no part of the package.
    if (id === undefined || target === undefined || attribute(tag, "TargetMode") === "External") continue;
    const path = posix.normalize(target.startsWith("/") ? target.slice(1) : `xl/${target}`);
    relationships.push({ id, type: attribute(tag, "Type") ?? "", target: path });
  }
  return relationships;
}

/**
 * The part a workbook relationship of `part.type` names, which need not be where Excel writes it
 * (styles at `xl/styles/custom.xml` lost every date); `part.path` when none names one.
 */
function partOfType(relationships: readonly Relationship[], part: { path: string; type: RegExp }): string {
  return relationships.find(({ type }) => part.type.test(type))?.target ?? part.path;
}

const SLIDE = /^ppt\/slides\/slide(\d+)\.xml$/;
const PRESENTATION = "ppt/presentation.xml";

/** A presentation's slides, in slide order: the text of each (its paragraphs, one per line) and the elements of all. */
export function readSlides(bytes: Uint8Array): { slides: string[]; elements: Element[] } {
  const parts = readParts(bytes, (name) => name === PRESENTATION || SLIDE.test(name));
  if (!parts.has(PRESENTATION)) throw new Error(`it has no ${PRESENTATION}`);
  const slides = numbered(parts, SLIDE);
  const tables = new TableBudget();
  return { slides: slides.map(slideText), elements: slides.flatMap((xml, index) => slideElements(xml, index + 1, tables)) };
}

/** The parts whose names match `pattern` (one numeric group), by that number: sheet2 before sheet10. */
function numbered(parts: Map<string, string>, pattern: RegExp): string[] {
  return [...parts]
    .flatMap(([name, xml]) => {
      const number = pattern.exec(name)?.[1];
      return number === undefined ? [] : [{ number: Number(number), xml }];
    })
    .sort((a, b) => a.number - b.number)
    .map(({ xml }) => xml);
}

/**
 * The bodies of the `<name>` elements (any prefix, no attributes) of `xml`, found by one pass over
 * their tags: a lazy `<si>([\s\S]*?)</si>` would rescan to the end from each unclosed tag.
 */
function* elementBodies(xml: string, name: string): Generator<string> {
  let start: number | undefined;
  for (const tag of xml.matchAll(new RegExp(`<(\\/?)(?:\\w+:)?${name}>`, "g"))) {
    if (tag[1] === "") start = tag.index + tag[0].length;
    else if (start !== undefined) {
      yield xml.slice(start, tag.index);
      start = undefined;
    }
  }
}

/** The decoded value of an attribute of one start tag (its closing quote found once: a regex would rescan from each `name="`). */
function attribute(tag: string, name: string): string | undefined {
  const opening = new RegExp(`\\s${name}\\s*=\\s*(["'])`).exec(tag);
  if (opening === null) return undefined;
  const start = opening.index + opening[0].length;
  const end = tag.indexOf(opening[1]!, start);
  return end === -1 ? undefined : decodeEntities(tag.slice(start, end));
}

/** `<t>` runs and `<rPh>` tags; `[^<>]*` and `[^<]*` keep the scan linear on any input. */
const STRING_ITEM_TOKEN = /<(?:\w+:)?t(?:\s[^<>]*)?>([^<]*)<\/(?:\w+:)?t>|<(\/?)(?:\w+:)?rPh\b[^<>]*>/g;

/**
 * The text of a SpreadsheetML string item (`<si>` or `<is>`): its `<t>` runs, without phonetic
 * guides, with the `_xHHHH_` escapes Excel writes for control characters decoded.
 */
function stringItemText(item: string): string {
  let runs = "";
  let inPhonetic = false;
  for (const [tag, text, closing] of item.matchAll(STRING_ITEM_TOKEN)) {
    if (text === undefined) inPhonetic = closing === "" && !tag.endsWith("/>");
    else if (!inPhonetic) runs += text;
  }
  const text = decodeEntities(runs);
  return text.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** A slide's `<a:t>` runs, joined within a paragraph; paragraphs and line breaks become newlines, blank lines dropped. */
function slideText(xml: string): string {
  const pieces = [...xml.matchAll(/<a:t(?:\s[^<>]*)?>([^<]*)<\/a:t>|<\/a:p>|<a:br\b[^<>]*\/>/g)].map((match) => match[1] ?? "\n");
  return decodeEntities(pieces.join(""))
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join("\n");
}
