import sharp from "sharp";
import { forOcr, MAX_IMAGE_PIXELS } from "../parse/ocr-images.ts";
import { recognize } from "../parse/ocr.ts";
import { DEFAULT_OCR_LANGUAGES } from "../parse/ocr-languages.ts";
import { ParseError } from "../parse/parse-error.ts";
import { countPartBytes, type PartPlan, planParts, type SplitSettings } from "./split-plan.ts";
import type { SplitPart } from "./split-pdf.ts";

const LIMITS = { limitInputPixels: MAX_IMAGE_PIXELS };

/**
 * Cuts a multi-page TIFF into parts as `settings` say, each a multi-page TIFF of its own (libvips,
 * through sharp, reads the part's pages and writes them LZW-compressed, keeping their resolution).
 * A page's text, for at_text, is read by OCR: a scanned bundle has no other. Runs in the task pool:
 * the file is untrusted. The pages of one part must share a size (libvips reads a part as one strip
 * of pages); a part whose pages differ fails as document_corrupt with libvips's reason.
 */
export async function splitTiff(bytes: Uint8Array, settings: SplitSettings, maxParts: number): Promise<{ pageCount: number; parts: SplitPart[] }> {
  const { pages: pageCount = 1, density } = await read(() => sharp(bytes, LIMITS).metadata());
  const plan = await planParts(settings, pageCount, (page) => pageText(bytes, page), maxParts);
  const parts: SplitPart[] = [];
  let total = 0;
  for (const part of plan) {
    const written = await read(() => tiffOf(bytes, part, density));
    total = countPartBytes(total, written.length, bytes.length);
    parts.push({ ...part, bytes: written });
  }
  return { pageCount, parts };
}

function tiffOf(bytes: Uint8Array, part: PartPlan, density: number | undefined): Promise<Buffer> {
  const image = sharp(bytes, { ...LIMITS, page: part.firstPage - 1, pages: part.lastPage - part.firstPage + 1 });
  return (density === undefined ? image : image.withMetadata({ density })).tiff({ compression: "lzw" }).toBuffer();
}

async function pageText(bytes: Uint8Array, page: number): Promise<string> {
  const image = await read(() => forOcr(sharp(bytes, { ...LIMITS, page: page - 1 })));
  return (await recognize(image, DEFAULT_OCR_LANGUAGES)).text;
}

/** libvips's refusals (a damaged file, pages of differing sizes in one part) as the parse's document_corrupt. */
async function read<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new ParseError(`cannot read the TIFF: ${(error as Error).message}`);
  }
}
