import { imageSize } from "image-size";
import { extractText, getDocumentProxy, getMeta } from "unpdf";
import { readDocumentText, readSlides, readWorkbook } from "./ooxml.ts";
import { boundText, csvShape, decodeUtf8, htmlToText } from "./text.ts";
import { tiffPageCount } from "./tiff.ts";

/** What a parse step stores: the text (bounded) and what could be read about the document. */
export interface ParseOutput {
  format: string;
  text?: string;
  /** True when the text was cut at MAX_TEXT_BYTES. */
  truncated?: boolean;
  pageCount?: number;
  width?: number;
  height?: number;
  /** CSV: records, including a header row. */
  rows?: number;
  /** CSV: fields of the first record. */
  columns?: number;
  /** PDF document information (Title, Author, ...), strings only. */
  info?: Record<string, string>;
  /** XLSX: worksheets (and chart sheets) in the workbook. */
  sheetCount?: number;
  /** XLSX: sheet names in workbook order, the first MAX_SHEET_NAMES of them. */
  sheetNames?: string[];
  /** PPTX: slides in the presentation. */
  slideCount?: number;
}

/** A document that cannot be parsed; the message is shown on the step. */
export class ParseError extends Error {
  override name = "ParseError";
}

const IMAGE_FORMATS = new Set(["jpeg", "png", "tiff", "heic", "webp", "gif"]);

/** Far more sheets than any real workbook has; a crafted one with millions stays a small output. */
export const MAX_SHEET_NAMES = 1000;

/** Text and metadata of a document of the given format id; throws ParseError when it cannot be read. */
export async function parseDocument(format: string, bytes: Uint8Array): Promise<ParseOutput> {
  try {
    if (format === "pdf") return await parsePdf(bytes);
    if (format === "docx") return { format, ...boundText(readDocumentText(bytes)) };
    if (format === "xlsx") return parseXlsx(bytes);
    if (format === "pptx") return parsePptx(bytes);
    if (IMAGE_FORMATS.has(format)) return parseImage(format, bytes);
    if (format === "txt") return { format, ...boundText(decodeUtf8(bytes)) };
    if (format === "html") return { format, ...boundText(htmlToText(decodeUtf8(bytes))) };
    if (format === "csv") return parseCsv(bytes);
    if (format === "json") return parseJson(bytes);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    throw new ParseError(`cannot parse the ${format} document: ${(error as Error).message}`);
  }
  throw new ParseError(`the parse node does not support ${format} documents yet`);
}

async function parsePdf(bytes: Uint8Array): Promise<ParseOutput> {
  // pdf.js takes ownership of the array it is given: hand it a copy. No eval (untrusted fonts), no console noise.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, verbosity: 0 });
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: true });
    const { info } = await getMeta(pdf);
    return { format: "pdf", pageCount: totalPages, ...boundText(text), info: stringEntries(info) };
  } finally {
    await pdf.destroy();
  }
}

/** The string-valued entries of a PDF info dictionary, each bounded to a sensible length. */
function stringEntries(info: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(info).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "");
  return Object.fromEntries(entries.map(([name, value]) => [name, boundText(value, 1000).text]));
}

function parseXlsx(bytes: Uint8Array): ParseOutput {
  const { sheetNames, text } = readWorkbook(bytes);
  const names = sheetNames.slice(0, MAX_SHEET_NAMES).map((name) => boundText(name, 1000).text);
  return { format: "xlsx", sheetCount: sheetNames.length, sheetNames: names, ...boundText(text) };
}

function parsePptx(bytes: Uint8Array): ParseOutput {
  const slides = readSlides(bytes);
  return { format: "pptx", slideCount: slides.length, ...boundText(slides.filter((slide) => slide !== "").join("\n\n")) };
}

function parseImage(format: string, bytes: Uint8Array): ParseOutput {
  const { width, height } = imageSize(bytes);
  return { format, width, height, ...(format === "tiff" ? { pageCount: tiffPageCount(bytes) } : {}) };
}

function parseCsv(bytes: Uint8Array): ParseOutput {
  const text = decodeUtf8(bytes);
  return { format: "csv", ...csvShape(text), ...boundText(text) };
}

function parseJson(bytes: Uint8Array): ParseOutput {
  const text = decodeUtf8(bytes);
  JSON.parse(text);
  return { format: "json", ...boundText(text) };
}
