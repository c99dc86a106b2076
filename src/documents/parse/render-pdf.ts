import { type getDocumentProxy, getResolvedPDFJS, renderPageAsImage } from "unpdf";
import { MAX_OCR_SIDE, type OcrImage } from "./ocr-images.ts";

/** An open PDF (pdf.js's document proxy, which unpdf does not export by name). */
export type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>;

/** The resolution pages are rendered at for OCR: what scanners use for text, 300 dpi (PDF units are 1/72 inch). */
const RENDER_DPI = 300;

/**
 * A page of an open PDF rendered (pdf.js onto a @napi-rs/canvas) as a PNG at RENDER_DPI, scaled
 * down so its longest side is at most MAX_OCR_SIDE pixels.
 */
export async function renderPageForOcr(pdf: PdfDocument, pageNumber: number): Promise<OcrImage> {
  const page = await pdf.getPage(pageNumber);
  const { width, height } = page.getViewport({ scale: 1 });
  const scale = Math.min(RENDER_DPI / 72, MAX_OCR_SIDE / Math.max(width, height, 1));
  const png = await renderPageAsImage(pdf, pageNumber, { canvasImport: () => import("@napi-rs/canvas"), scale });
  return { png: new Uint8Array(png), dpi: Math.round(scale * 72), scale };
}

/** Whether a page paints a raster image (a scan, a photo), by its operator list. */
export async function paintsImage(pdf: PdfDocument, pageNumber: number): Promise<boolean> {
  const { OPS } = await getResolvedPDFJS();
  const imageOps = new Set<number>([
    OPS.paintImageXObject,
    OPS.paintImageXObjectRepeat,
    OPS.paintInlineImageXObject,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageMaskXObject,
    OPS.paintImageMaskXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
  ]);
  const { fnArray } = await (await pdf.getPage(pageNumber)).getOperatorList();
  return fnArray.some((op) => imageOps.has(op));
}
