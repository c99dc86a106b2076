import { constants, deflateRawSync } from "node:zlib";
import { strToU8, zipSync } from "fflate";
import { pdfOf } from "./samples.ts";

const MiB = 1024 * 1024;

/**
 * zlib data that inflates to `size` bytes of `fill` (a whole number of MiB), built without holding
 * them: one sync-flushed raw deflate block of 1 MiB repeated (each refers only to itself), a final
 * empty block, and the Adler-32 of the whole, computed.
 */
function deflateBomb(size: number, fill = 0x20): Buffer {
  const block = deflateRawSync(Buffer.alloc(MiB, fill), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  const blocks = size / MiB;
  // Adler-32 of n bytes of f: a = 1 + n*f, b = n + f*n*(n+1)/2, both mod 65521.
  const n = BigInt(blocks * MiB);
  const a = (1n + n * BigInt(fill)) % 65521n;
  const b = (n + (BigInt(fill) * n * (n + 1n)) / 2n) % 65521n;
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(Number((b << 16n) | a));
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...Array.from({ length: blocks }, () => block), Buffer.from([0x03, 0x00]), adler]);
}

/** A one-page PDF whose content stream (FlateDecode) inflates to `size` bytes of spaces. */
export function inflatingPdf(size: number): Buffer {
  const stream = deflateBomb(size);
  const head = Buffer.from("%PDF-1.4\n", "latin1");
  const objects: Buffer[] = [
    Buffer.from("<< /Type /Catalog /Pages 2 0 R >>"),
    Buffer.from("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
    Buffer.from("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << >> >>"),
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from("\nendstream")]),
  ];
  const parts: Buffer[] = [head];
  const offsets: number[] = [];
  let length = head.length;
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), body, Buffer.from("\nendobj\n")]);
    parts.push(object);
    length += object.length;
  });
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  tail += offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`;
  return Buffer.concat([...parts, Buffer.from(tail, "latin1")]);
}

/** A "JPEG" of `size` bytes: the start-of-image and APP0 markers, then zeros. */
export function zeroJpeg(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  bytes.set([0xff, 0xd8, 0xff, 0xe0]);
  return bytes;
}

/**
 * A PDF encrypted with the standard security handler under a user password: its /U entry matches
 * no empty password, so no reader opens it without the password.
 */
export function encryptedPdf(): Buffer {
  const hex = (byte: number) => byte.toString(16).padStart(2, "0").repeat(32);
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    `<< /Filter /Standard /V 1 /R 2 /O <${hex(0x4f)}> /U <${hex(0x55)}> /P -4 >>`,
  ];
  return pdfOf(objects, `/Root 1 0 R /Encrypt 4 0 R /ID [<${hex(0x11).slice(0, 32)}> <${hex(0x11).slice(0, 32)}>]`);
}

/** An XLSX of about 100 KB whose shared strings inflate to 45 MB of tiny items: seconds of scanning. */
export function pathologicalXlsx(): Buffer {
  const item = "<si><t>a</t></si>";
  const sharedStrings = `<sst>${item.repeat(Math.floor((45 * MiB) / item.length))}</sst>`;
  const workbook = '<workbook><sheets><sheet name="A"/></sheets></workbook>';
  return zipParts({ "xl/workbook.xml": workbook, "xl/sharedStrings.xml": sharedStrings });
}

/** A zip archive of deflated text parts. */
function zipParts(parts: Record<string, string>): Buffer {
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(parts).map(([name, text]) => [name, strToU8(text)])), { level: 9 }));
}
