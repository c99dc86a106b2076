import decodeHeic from "heic-decode";
import sharp, { type Sharp } from "sharp";

// A parse uses one libvips thread and keeps no cache between documents: parallelism is the pool's
// number of threads, and memory is released when a document is done.
sharp.concurrency(1);
sharp.cache(false);

/**
 * The longest side, in pixels, an image is given to OCR: an A4 page scanned at 300 dpi is
 * 2480 x 3508, and text that small stays readable; larger scans and photos are scaled down (OCR time
 * grows with the pixels, its accuracy does not).
 */
export const MAX_OCR_SIDE = 3600;

/**
 * The most pixels a picture may have, 64 million (8000 x 8000: an A3 page scanned at 600 dpi is
 * 70 million, a little more), so that a small file declaring a huge picture fails at once instead of
 * decoding gigabytes: `cannot parse the png document: Input image exceeds pixel limit`.
 */
export const MAX_IMAGE_PIXELS = 64_000_000;

/** Resolution assumed for a picture that does not state one (or states an implausible one): a scan's usual 300 dpi. */
const ASSUMED_DPI = 300;

const LIMITS = { limitInputPixels: MAX_IMAGE_PIXELS };

/**
 * A small picture is enlarged to this longest side before OCR, at most MAX_UPSCALE times: a page
 * captured at screen resolution (791 x 1024, about 96 dpi) has letters a few pixels tall, and
 * Tesseract reads far fewer of its words than at two or three times the size.
 */
const MIN_OCR_SIDE = 2000;
const MAX_UPSCALE = 3;

/** A picture ready for OCR and the resolution it has (Tesseract sizes its text expectations by it). */
export interface OcrImage {
  png: Uint8Array;
  dpi: number;
  /** Its pixels per unit of the page it shows (PDF points, or the original picture's pixels): boxes found in it are divided by this. */
  scale: number;
}

/** Frames of one image file, each ready for OCR: grey, upright, at most MAX_OCR_SIDE, PNG. */
export async function imagePagesForOcr(format: string, bytes: Uint8Array): Promise<OcrImage[]> {
  if (format === "heic") return [await forOcr(await heicImage(bytes))];
  if (format !== "tiff") return [await forOcr(sharp(bytes, LIMITS))];
  // Every page of a TIFF; GIF and WebP animations are read as their first frame, as viewers show them.
  const { pages = 1 } = await sharp(bytes, LIMITS).metadata();
  const images: OcrImage[] = [];
  for (let page = 0; page < pages; page++) images.push(await forOcr(sharp(bytes, { ...LIMITS, page })));
  return images;
}

/**
 * An image scaled to fit MAX_OCR_SIDE (or enlarged towards MIN_OCR_SIDE when small), grey (what
 * Tesseract reads), as PNG, with its resolution after scaling.
 */
export async function forOcr(image: Sharp): Promise<OcrImage> {
  const { density, width = 1, height = 1 } = await image.metadata();
  const stated = density !== undefined && density >= 72 && density <= 1200 ? density : ASSUMED_DPI;
  const longest = Math.max(width, height, 1);
  const factor = longest < MIN_OCR_SIDE ? Math.min(MAX_UPSCALE, MIN_OCR_SIDE / longest) : Math.min(1, MAX_OCR_SIDE / longest);
  const side = Math.max(1, Math.round(longest * factor));
  const png = await image
    .rotate() // EXIF orientation: a phone photo taken sideways is read upright
    .flatten({ background: "#ffffff" }) // transparent text backgrounds become white, not black
    .greyscale()
    .toColourspace("b-w") // one channel: a third of the pixels to encode and for Tesseract to read
    .resize({ width: side, height: side, fit: "inside" })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return { png, dpi: Math.round(stated * factor), scale: factor };
}

/**
 * HEIC stills are HEVC-coded, and the prebuilt libvips of sharp has no HEVC decoder (patents):
 * heic-decode (libheif with libde265, compiled to WebAssembly) decodes the primary image to pixels.
 * A HEIF whose image is AV1-coded is read by sharp itself.
 */
async function heicImage(bytes: Uint8Array): Promise<Sharp> {
  try {
    const image = sharp(bytes, LIMITS);
    await image.metadata();
    return sharp(await image.png().toBuffer());
  } catch {
    // The primary image's size is known before its pixels are decoded: a huge one is refused first.
    const images = await decodeHeic.all({ buffer: bytes });
    try {
      const primary = images[0]!;
      if (primary.width * primary.height > MAX_IMAGE_PIXELS) throw new Error("Input image exceeds pixel limit");
      const { width, height, data } = await primary.decode();
      return sharp(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { raw: { width, height, channels: 4 } });
    } finally {
      images.dispose();
    }
  }
}
