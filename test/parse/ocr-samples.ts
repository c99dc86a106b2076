import { createCanvas } from "@napi-rs/canvas";
import sharp from "sharp";

/** Text set in 12 pt at 300 dpi is 50 px high; the pictures below are scans of it. */
const DPI = 300;
const FONT_PX = Math.round((12 * DPI) / 72);

/** A white picture of `lines` in 12 pt black sans-serif at 300 dpi, as PNG (what a scanner would make of a printed page). */
export function textPng(lines: readonly string[], width = 1800): Buffer {
  const lineHeight = Math.round(FONT_PX * 1.5);
  const canvas = createCanvas(width, lineHeight * (lines.length + 1));
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = "#000000";
  context.font = `${FONT_PX}px "DejaVu Sans", "Liberation Sans", sans-serif`;
  lines.forEach((line, index) => context.fillText(line, 60, lineHeight * (index + 1)));
  return canvas.toBuffer("image/png");
}

/**
 * A page captured at screen resolution: `lines` set in a serif at three times the size, scaled down
 * to 791 px wide (letters about 8 px tall) and saved as a JPEG at quality 60, as a screenshot of a
 * paper's page is.
 */
export async function lowResolutionJpeg(lines: readonly string[]): Promise<Buffer> {
  const width = 791 * 3;
  const canvas = createCanvas(width, 90 + lines.length * 45 + 60);
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = "#000000";
  context.font = `24px "DejaVu Serif", "Liberation Serif", serif`;
  lines.forEach((line, index) => context.fillText(line, 60, 90 + index * 45));
  return sharp(canvas.toBuffer("image/png")).resize({ width: 791 }).jpeg({ quality: 60 }).toBuffer();
}

export async function textJpeg(lines: readonly string[]): Promise<Buffer> {
  return sharp(textPng(lines)).jpeg({ quality: 90 }).toBuffer();
}

/** A multi-page TIFF, one page per entry. */
export async function textTiff(pages: readonly (readonly string[])[]): Promise<Buffer> {
  const frames = await Promise.all(pages.map((lines) => sharp(textPng(lines)).raw().toBuffer({ resolveWithObject: true })));
  const { width, height, channels } = frames[0]!.info;
  // sharp joins frames of equal size into a multi-page image; TIFF output keeps every page.
  return sharp(Buffer.concat(frames.map((frame) => frame.data)), { raw: { width, height: height * pages.length, channels, pageHeight: height } } as never)
    .tiff({ compression: "lzw" })
    .toBuffer();
}

/** A PDF page: a scanned picture (JPEG, no text layer), or text in Helvetica (a text layer). */
export type PdfPage = { scan: readonly string[]; stamp?: string } | { text: string };

/** A PDF of the given pages; scanned pages are image-only, drawn at 300 dpi. */
export async function pdfOf(pages: readonly PdfPage[], { encrypted = false } = {}): Promise<Buffer> {
  const objects: (string | Buffer)[] = ["<< /Type /Catalog /Pages 2 0 R >>", ""];
  const kids: number[] = [];
  const add = (body: string | Buffer): number => objects.push(body);
  const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  for (const page of pages) {
    if ("text" in page) {
      const content = `BT /F1 12 Tf 36 36 Td (${page.text}) Tj ET`;
      const stream = add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
      kids.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 432 96] /Contents ${stream} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`));
      continue;
    }
    const jpeg = await sharp(textPng(page.scan)).greyscale().jpeg({ quality: 90 }).toBuffer();
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    const image = add(
      Buffer.concat([
        Buffer.from(
          `<< /Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length ${jpeg.length} >>\nstream\n`,
          "latin1",
        ),
        jpeg,
        Buffer.from("\nendstream", "latin1"),
      ]),
    );
    const [w, h] = [(width * 72) / DPI, (height * 72) / DPI];
    // A stamp is a few characters of real text over the scan (a page number a scanner added).
    const stamp = page.stamp === undefined ? "" : ` BT /F1 6 Tf ${w - 30} 4 Td (${page.stamp}) Tj ET`;
    const content = `q ${w} 0 0 ${h} 0 0 cm /Im1 Do Q${stamp}`;
    const stream = add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    kids.push(
      add(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Contents ${stream} 0 R /Resources << /XObject << /Im1 ${image} 0 R >> /Font << /F1 ${font} 0 R >> >> >>`,
      ),
    );
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((kid) => `${kid} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  // A standard security handler whose user password is not empty: /U matches no password we know.
  const encrypt = encrypted ? add(`<< /Filter /Standard /V 1 /R 2 /O <${"ab".repeat(32)}> /U <${"cd".repeat(32)}> /P -4 >>`) : 0;
  const parts: Buffer[] = [Buffer.from("%PDF-1.4\n", "latin1")];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const part = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`, "latin1"), Buffer.from(body as string | Buffer), Buffer.from("\nendobj\n", "latin1")]);
    parts.push(part);
    length += part.length;
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  tail += offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  const extra = encrypted ? ` /Encrypt ${encrypt} 0 R /ID [<${"01".repeat(16)}> <${"01".repeat(16)}>]` : "";
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${extra} >>\nstartxref\n${length}\n%%EOF\n`;
  parts.push(Buffer.from(tail, "latin1"));
  return Buffer.concat(parts);
}

/** Character error rate: the edit distance between the texts (whitespace runs as one space) over the expected length. */
export function characterErrorRate(expected: string, actual: string): number {
  const a = expected.replace(/\s+/g, " ").trim();
  const b = actual.replace(/\s+/g, " ").trim();
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]! / a.length;
}
