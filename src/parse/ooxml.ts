import { unzipSync } from "fflate";
import { decodeEntities, decodeUtf8 } from "./text.ts";

/** The most the parts read from one package may inflate to, together; a package that declares more is refused. */
export const MAX_INFLATED_BYTES = 50 * 1024 * 1024;

/**
 * The parts of a zip package whose names `wanted` accepts, decoded as UTF-8. Only those are inflated,
 * and only while their declared sizes add up to at most `maxBytes`: fflate inflates each part into a
 * buffer of its declared size, so a part that lies about its size is cut, never grown.
 */
export function readParts(bytes: Uint8Array, wanted: (name: string) => boolean, maxBytes = MAX_INFLATED_BYTES): Map<string, string> {
  let declared = 0;
  const parts = unzipSync(bytes, {
    filter: ({ name, originalSize }) => {
      if (!wanted(name)) return false;
      declared += originalSize;
      if (declared > maxBytes) throw new Error(`its parts inflate to more than ${maxBytes / (1024 * 1024)} MB`);
      return true;
    },
  });
  return new Map(Object.entries(parts).map(([name, data]) => [name, decodeUtf8(data)]));
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
  const sheetNames = [...workbook.matchAll(/<(?:\w+:)?sheet\s[^>]*>/g)].map((match) => attribute(match[0], "name") ?? "");
  const sharedStrings = [...(parts.get(SHARED_STRINGS) ?? "").matchAll(/<(?:\w+:)?si>([\s\S]*?)<\/(?:\w+:)?si>/g)];
  const inlineStrings = numbered(parts, WORKSHEET).flatMap((sheet) => [...sheet.matchAll(/<(?:\w+:)?is>([\s\S]*?)<\/(?:\w+:)?is>/g)]);
  const text = [...sharedStrings, ...inlineStrings].map((match) => stringItemText(match[1]!)).filter((item) => item !== "");
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

/** The decoded value of an attribute of one start tag. */
function attribute(tag: string, name: string): string | undefined {
  const value = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`).exec(tag);
  return value === null ? undefined : decodeEntities(value[1] ?? value[2]!);
}

/**
 * The text of a SpreadsheetML string item (`<si>` or `<is>`): its `<t>` runs, without phonetic
 * guides, with the `_xHHHH_` escapes Excel writes for control characters decoded.
 */
function stringItemText(item: string): string {
  const runs = item.replace(/<(?:\w+:)?rPh\b[\s\S]*?<\/(?:\w+:)?rPh>/g, "").matchAll(/<(?:\w+:)?t(?:\s[^>]*)?>([\s\S]*?)<\/(?:\w+:)?t>/g);
  const text = decodeEntities([...runs].map((run) => run[1]).join(""));
  return text.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** A slide's `<a:t>` runs, joined within a paragraph; paragraphs and line breaks become newlines, blank lines dropped. */
function slideText(xml: string): string {
  const pieces = [...xml.matchAll(/<a:t(?:\s[^>]*)?>([\s\S]*?)<\/a:t>|<\/a:p>|<a:br\b[^>]*\/>/g)].map((match) => match[1] ?? "\n");
  return decodeEntities(pieces.join(""))
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join("\n");
}
