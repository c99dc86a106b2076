import { imageSize } from "image-size";
import { getDocumentProxy, getMeta } from "unpdf";
import { MAX_IMAGE_PIXELS } from "./ocr-images.ts";
import {
  boundPages,
  imagePages,
  joinPages,
  type OcrSettings,
  ocrPageNumbers,
  type PageText,
  pagesInReadingOrder,
  type PdfSettings,
  pdfPages,
} from "./ocr-pages.ts";
import { csvElements } from "./elements/csv.ts";
import { readWordDocument } from "./elements/docx.ts";
import type { Element } from "./elements/element.ts";
import { readHtml } from "./elements/html.ts";
import { markdownElements } from "./elements/markdown-input.ts";
import { pdfLayoutElements } from "./elements/pdf-layout.ts";
import { plainTextElements } from "./elements/plain-text.ts";
import { structured } from "./elements/structured.ts";
import { readSlides, readWorkbook } from "./ooxml.ts";
import { boundText, csvShape, decodeTextFile } from "./text.ts";
import { tiffPageCount } from "./tiff.ts";
import { EncryptedPartError } from "./zip.ts";
import { ParseError } from "./parse-error.ts";
import { type EmailAttachment, type ReadEmail, readEmail } from "./email.ts";
import { readElectronicBook } from "./elements/epub.ts";
import { readOpenDocumentText } from "./elements/odt.ts";
import { readRichText } from "./elements/rtf.ts";

/** What a parse step stores: the text (bounded) and what could be read about the document. */
export interface ParseOutput {
  format: string;
  text?: string;
  /** True when the text, the elements or the Markdown was cut at MAX_TEXT_BYTES. */
  truncated?: boolean;
  /** The document's structure in reading order (see src/documents/parse/elements/element.ts). */
  elements?: Element[];
  /** The document as CommonMark with GFM tables. */
  markdown?: string;
  pageCount?: number;
  width?: number;
  height?: number;
  /** CSV: records, including a header row. */
  rows?: number;
  /** CSV: fields of the first record. */
  columns?: number;
  /** PDF document information (Title, Author, ...), strings only. */
  info?: Record<string, string>;
  /** XLSX: worksheets (and chart sheets) in the workbook; ODS: its sheets. */
  sheetCount?: number;
  /** XLSX and ODS: sheet names in workbook order, the first MAX_SHEET_NAMES of them. */
  sheetNames?: string[];
  /** PPTX: slides in the presentation. */
  slideCount?: number;
  /** EPUB: chapters read, in the spine's order. */
  chapterCount?: number;
  /** Text formats: the encoding the text was read in ("utf-8", "utf-16le", "windows-1252", ...). */
  encoding?: string;
  /** Text formats: how the encoding was decided: a byte order mark, the declared charset, an HTML meta, detected from the bytes, or UTF-8 by default. */
  encodingSource?: string;
  /** PDF and images (unless OCR is `never`): each page's text, and whether it was OCRed. */
  pages?: PageText[];
  /** PDF and images: the numbers of the pages that were OCRed. */
  ocrPages?: number[];
  /** eml: the message's subject, sender, recipients and date. */
  email?: ReadEmail["email"];
  /** eml: every attachment, with the format detected from its bytes and whether it was parsed (into the text and elements). */
  attachments?: EmailAttachment[];
}

/** What a parse node's settings and the stored file tell the parse beside its bytes. */
export interface ParseOptions extends PdfSettings {
  /** The Content-Type the file was uploaded with: its charset decides how a text file is decoded. */
  contentType?: string;
}

const IMAGE_FORMATS = new Set(["jpeg", "png", "tiff", "heic", "webp", "gif"]);

/** Far more sheets than any real workbook has; a crafted one with millions stays a small output. */
export const MAX_SHEET_NAMES = 1000;

/** Text and metadata of a document of the given format id; throws ParseError when it cannot be read. */
export async function parseDocument(format: string, bytes: Uint8Array, options: ParseOptions = {}): Promise<ParseOutput> {
  try {
    if (format === "pdf") return await parsePdf(bytes, options);
    if (format === "docx") return parseDocx(bytes);
    if (format === "xlsx") return parseXlsx(bytes);
    if (format === "pptx") return parsePptx(bytes);
    if (IMAGE_FORMATS.has(format)) return await parseImage(format, bytes, options);
    if (format === "txt") return parsePlainText(bytes, options);
    if (format === "html") return parseHtml(bytes, options);
    if (format === "csv") return parseCsv(bytes, options);
    if (format === "json") return parseJson(bytes, options);
    if (format === "md") return parseMarkdown(bytes, options);
    if (format === "eml") return await parseEmail(bytes, options);
    if (format === "odt") return parseOdt(bytes);
    if (format === "ods") return parseOds(bytes);
    if (format === "rtf") return parseRtf(bytes);
    if (format === "epub") return parseEpub(bytes);
  } catch (error) {
    if (error instanceof ParseError) throw error;
    // A password-protected PDF is refused where it is opened (openPdf).
    const encrypted = error instanceof EncryptedPartError;
    throw new ParseError(`cannot parse the ${format} document: ${(error as Error).message}`, encrypted ? "document_encrypted" : "document_corrupt");
  }
  throw new ParseError(`the parse node does not support ${format} documents yet`, "format_unsupported");
}

async function parsePdf(bytes: Uint8Array, settings: PdfSettings): Promise<ParseOutput> {
  const pdf = await openPdf(bytes);
  try {
    const { pages: layers, layout, boldFonts, ocrElements } = await pdfPages(pdf, settings);
    const { info } = await getMeta(pdf);
    // Text-layer pages and OCR'd pages, in page order (the sort is stable: each page keeps its order).
    const elements = [...pdfLayoutElements(layout, boldFonts), ...ocrElements].sort((a, b) => (a.page ?? 0) - (b.page ?? 0));
    const read = pagesInReadingOrder(layers, elements);
    const pages = boundPages(read);
    return {
      format: "pdf",
      pageCount: pdf.numPages,
      ...structured(joinPages(read), elements),
      info: stringEntries(info),
      pages,
      ocrPages: ocrPageNumbers(pages),
    };
  } finally {
    await pdf.destroy();
  }
}

/**
 * pdf.js opens a PDF encrypted with an empty user password (permissions only) by itself; one that
 * needs a password to open fails the step with `document_encrypted`.
 */
export async function openPdf(bytes: Uint8Array): ReturnType<typeof getDocumentProxy> {
  try {
    // pdf.js takes ownership of the array it is given: hand it a copy. No eval (untrusted fonts), no console noise.
    // Images past MAX_IMAGE_PIXELS are not decoded (pdf.js skips them when rendering).
    return await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, verbosity: 0, maxImageSize: MAX_IMAGE_PIXELS });
  } catch (error) {
    if ((error as Error).name === "PasswordException") {
      throw new ParseError("the PDF is encrypted with a password; send it without the password protection", "document_encrypted");
    }
    throw error;
  }
}

/** The string-valued entries of a PDF info dictionary, each bounded to a sensible length. */
function stringEntries(info: Record<string, unknown>): Record<string, string> {
  const entries = Object.entries(info).filter((entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "");
  return Object.fromEntries(entries.map(([name, value]) => [name, boundText(value, 1000).text]));
}

function parseDocx(bytes: Uint8Array): ParseOutput {
  const { text, elements } = readWordDocument(bytes);
  return { format: "docx", ...structured(text, elements) };
}

function parseOdt(bytes: Uint8Array): ParseOutput {
  const { text, elements } = readOpenDocumentText(bytes);
  return { format: "odt", ...structured(text, elements) };
}

function parseOds(bytes: Uint8Array): ParseOutput {
  const { text, elements, sheetNames } = readOpenDocumentText(bytes, "spreadsheet");
  return { format: "ods", ...sheetList(sheetNames), ...structured(text, elements) };
}

/** A workbook's sheet count and names, each name bounded, MAX_SHEET_NAMES of them at most. */
function sheetList(sheetNames: readonly string[]): Pick<ParseOutput, "sheetCount" | "sheetNames"> {
  return { sheetCount: sheetNames.length, sheetNames: sheetNames.slice(0, MAX_SHEET_NAMES).map((name) => boundText(name, 1000).text) };
}

function parseEpub(bytes: Uint8Array): ParseOutput {
  const { text, elements, chapterCount } = readElectronicBook(bytes);
  return { format: "epub", chapterCount, ...structured(text, elements) };
}

function parseRtf(bytes: Uint8Array): ParseOutput {
  const { text, elements } = readRichText(bytes);
  return { format: "rtf", ...structured(text, elements) };
}

function parseXlsx(bytes: Uint8Array): ParseOutput {
  const { sheetNames, text, elements } = readWorkbook(bytes);
  return { format: "xlsx", ...sheetList(sheetNames), ...structured(text, elements) };
}

function parsePptx(bytes: Uint8Array): ParseOutput {
  const { slides, elements } = readSlides(bytes);
  return { format: "pptx", slideCount: slides.length, ...structured(slides.filter((slide) => slide !== "").join("\n\n"), elements) };
}

async function parseImage(format: string, bytes: Uint8Array, settings: OcrSettings): Promise<ParseOutput> {
  const { width, height } = imageSize(bytes);
  const output: ParseOutput = { format, width, height, ...(format === "tiff" ? { pageCount: tiffPageCount(bytes) } : {}) };
  if (settings.ocr === "never") return output;
  const { pages: frames, elements } = await imagePages(format, bytes, settings);
  const read = pagesInReadingOrder(frames, elements);
  const pages = boundPages(read);
  return { ...output, ...structured(joinPages(read), elements), pages, ocrPages: ocrPageNumbers(pages) };
}

function parsePlainText(bytes: Uint8Array, options: ParseOptions): ParseOutput {
  const { text, encoding, encodingSource } = decodeTextFile(bytes, options.contentType ?? "", false);
  return { format: "txt", ...structured(text, plainTextElements(text)), encoding, encodingSource };
}

function parseMarkdown(bytes: Uint8Array, options: ParseOptions): ParseOutput {
  const { text, encoding, encodingSource } = decodeTextFile(bytes, options.contentType ?? "", false);
  const elements = markdownElements(text);
  return { format: "md", ...structured(elements.map((element) => element.text).join("\n\n"), elements), encoding, encodingSource };
}

/** A message, its body and the attachments we read (each parsed as its own format, within this parse's budgets). */
async function parseEmail(bytes: Uint8Array, options: ParseOptions): Promise<ParseOutput> {
  const { text, elements, email, attachments } = await readEmail(bytes, (format, content) => parseDocument(format, content, { ...options, contentType: "" }));
  return { format: "eml", ...structured(text, elements), email, attachments };
}

function parseHtml(bytes: Uint8Array, options: ParseOptions): ParseOutput {
  const decoded = decodeTextFile(bytes, options.contentType ?? "", true);
  const { text, elements } = readHtml(decoded.text);
  return { format: "html", ...structured(text, elements), encoding: decoded.encoding, encodingSource: decoded.encodingSource };
}

function parseCsv(bytes: Uint8Array, options: ParseOptions): ParseOutput {
  const { text, encoding, encodingSource } = decodeTextFile(bytes, options.contentType ?? "", false);
  return { format: "csv", ...csvShape(text), ...structured(text, csvElements(text)), encoding, encodingSource };
}

function parseJson(bytes: Uint8Array, options: ParseOptions): ParseOutput {
  const { text, encoding, encodingSource } = decodeTextFile(bytes, options.contentType ?? "", false);
  JSON.parse(text);
  return { format: "json", ...boundText(text), encoding, encodingSource };
}
