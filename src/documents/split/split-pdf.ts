import { EncryptedPDFError, PDFDocument } from "pdf-lib";
import { recognize } from "../parse/ocr.ts";
import { DEFAULT_OCR_LANGUAGES } from "../parse/ocr-languages.ts";
import { openPdf } from "../parse/parse-document.ts";
import { ParseError } from "../parse/parse-error.ts";
import { type PdfDocument, renderPageForOcr } from "../parse/render-pdf.ts";
import { countPartBytes, type PartPlan, planParts, SplitError, type SplitSettings } from "./split-plan.ts";

/** One part of a split PDF: its pages, its label, and its bytes (a PDF of those pages). */
export interface SplitPart extends PartPlan {
  bytes: Uint8Array;
}

/**
 * Cuts a PDF into parts as `settings` say, each a PDF of its own (pdf-lib copies the pages with what
 * they use). Runs in the task pool: the PDF is untrusted. pdf.js reads the page count and, for
 * at_text, each page's text layer (or OCR of its rendering, for a scanned page); the plan is made
 * (and `maxParts` checked) before any part is
 * written. Throws ParseError (document_encrypted, document_corrupt) or SplitError.
 */
export async function splitPdf(bytes: Uint8Array, settings: SplitSettings, maxParts: number): Promise<{ pageCount: number; parts: SplitPart[] }> {
  let plan: PartPlan[];
  let pageCount: number;
  let reader: PdfDocument | undefined;
  try {
    reader = await openPdf(bytes);
    const open = reader;
    pageCount = open.numPages;
    plan = await planParts(settings, pageCount, (page) => pageText(open, page), maxParts);
  } catch (error) {
    if (error instanceof SplitError || error instanceof ParseError) throw error;
    throw new ParseError(`cannot read the PDF: ${(error as Error).message}`);
  } finally {
    await reader?.destroy();
  }
  let source: PDFDocument;
  try {
    source = await PDFDocument.load(bytes, { updateMetadata: false });
  } catch (error) {
    if (error instanceof EncryptedPDFError) throw new ParseError("the PDF is encrypted; send it without the encryption", "document_encrypted");
    throw new ParseError(`cannot read the PDF: ${(error as Error).message}`);
  }
  const parts: SplitPart[] = [];
  let total = 0;
  for (const part of plan) {
    const target = await PDFDocument.create({ updateMetadata: false });
    const indices = Array.from({ length: part.lastPage - part.firstPage + 1 }, (_, n) => part.firstPage - 1 + n);
    for (const page of await target.copyPages(source, indices)) target.addPage(page);
    const written = await target.save();
    total = countPartBytes(total, written.length, bytes.length);
    parts.push({ ...part, bytes: written });
  }
  return { pageCount, parts };
}

/** A page's text layer, its lines ended by newlines; a page without one (a scan) is read by OCR. */
async function pageText(reader: PdfDocument, page: number): Promise<string> {
  const proxy = await reader.getPage(page);
  let layer: string;
  try {
    const { items } = await proxy.getTextContent();
    layer = items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join("");
  } finally {
    proxy.cleanup();
  }
  if (layer.trim() !== "") return layer;
  return (await recognize(await renderPageForOcr(reader, page), DEFAULT_OCR_LANGUAGES)).text;
}
