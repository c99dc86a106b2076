import { decodeEntities } from "./text.ts";
import { readParts } from "./zip.ts";

const DOCUMENT = "word/document.xml";
/** The WordprocessingML elements that carry text or its layout; `[^<>]*` and `[^<]*` keep the scan linear on any input. */
const DOCUMENT_TOKEN = /<w:t(?:\s[^<>]*)?>([^<]*)<\/w:t>|<(\/?)(w:p|w:pPr|w:tab|w:br|w:cr|mc:Fallback)(?:\s[^<>]*)?\/?>/g;

/** The text of a docx package's main document: paragraphs separated by a blank line, tabs and breaks kept. */
export function readDocumentText(bytes: Uint8Array): string {
  const document = readParts(bytes, (name) => name === DOCUMENT).get(DOCUMENT);
  if (document === undefined) throw new Error(`it has no ${DOCUMENT}`);
  return documentParagraphs(document).join("\n\n").trim();
}

/**
 * The paragraphs of a WordprocessingML body: `<w:t>` runs, `<w:tab/>` as a tab, `<w:br/>` and
 * `<w:cr/>` as newlines. Skipped: tab stops in paragraph properties (also `<w:tab>`), and the
 * fallback copy Word writes of each text box for older readers.
 */
function documentParagraphs(xml: string): string[] {
  const paragraphs: string[] = [];
  let paragraph = "";
  let inProperties = false;
  let fallbackDepth = 0;
  for (const [tag, text, closing, name] of xml.matchAll(DOCUMENT_TOKEN)) {
    const selfClosing = tag.endsWith("/>");
    if (name === "mc:Fallback" && !selfClosing) fallbackDepth = Math.max(0, fallbackDepth + (closing ? -1 : 1));
    else if (fallbackDepth > 0) continue;
    else if (name === "w:pPr") inProperties = !closing && !selfClosing;
    else if (text !== undefined) paragraph += decodeEntities(text);
    else if (name === "w:tab" && !inProperties) paragraph += "\t";
    else if (name === "w:br" || name === "w:cr") paragraph += "\n";
    else if (name === "w:p" && (closing || selfClosing)) {
      paragraphs.push(paragraph);
      paragraph = "";
    }
  }
  return paragraph === "" ? paragraphs : [...paragraphs, paragraph];
}

export interface Workbook {
  /** Sheet names in workbook order. */
  sheetNames: string[];
  /** The shared strings, then each worksheet's inline strings, one per line. */
  text: string;
}

const WORKBOOK = "xl/workbook.xml";
const SHARED_STRINGS = "xl/sharedStrings.xml";
const WORKSHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;

/** The sheet names and the text of an xlsx package. */
export function readWorkbook(bytes: Uint8Array): Workbook {
  const parts = readParts(bytes, (name) => name === WORKBOOK || name === SHARED_STRINGS || WORKSHEET.test(name));
  const workbook = parts.get(WORKBOOK);
  if (workbook === undefined) throw new Error(`it has no ${WORKBOOK}`);
  const sheetNames = [...workbook.matchAll(/<(?:\w+:)?sheet\s[^<>]*>/g)].map((match) => attribute(match[0], "name") ?? "");
  const sharedStrings = elementBodies(parts.get(SHARED_STRINGS) ?? "", "si");
  const inlineStrings = numbered(parts, WORKSHEET).flatMap((sheet) => elementBodies(sheet, "is"));
  const text = [...sharedStrings, ...inlineStrings].map(stringItemText).filter((item) => item !== "");
  return { sheetNames, text: text.join("\n") };
}

const SLIDE = /^ppt\/slides\/slide(\d+)\.xml$/;
const PRESENTATION = "ppt/presentation.xml";

/** The text of each slide of a pptx package, in slide order: its paragraphs, one per line. */
export function readSlides(bytes: Uint8Array): string[] {
  const parts = readParts(bytes, (name) => name === PRESENTATION || SLIDE.test(name));
  if (!parts.has(PRESENTATION)) throw new Error(`it has no ${PRESENTATION}`);
  return numbered(parts, SLIDE).map(slideText);
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
function elementBodies(xml: string, name: string): string[] {
  const bodies: string[] = [];
  let start: number | undefined;
  for (const tag of xml.matchAll(new RegExp(`<(\\/?)(?:\\w+:)?${name}>`, "g"))) {
    if (tag[1] === "") start = tag.index + tag[0].length;
    else if (start !== undefined) {
      bodies.push(xml.slice(start, tag.index));
      start = undefined;
    }
  }
  return bodies;
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
