// Multipart bodies with one PDF-looking file part named "file", whole or streamed.
const BOUNDARY = "docpipe-bench-boundary";
export const MULTIPART_CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

const HEAD = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
const FILLER = Buffer.alloc(64 * 1024, "0123456789abcdef\n");
const PDF_HEADER = "%PDF-1.7\n%";
/** A file's unique id: 16 hex digits in its second line, so every upload is new to content-addressed storage. */
const ID_WIDTH = 16;
const ID_OFFSET = HEAD.length + PDF_HEADER.length;

/** `size` bytes (at least 32) that sniff as PDF. */
export function pdfBytes(size: number): Buffer {
  const file = Buffer.alloc(size, FILLER);
  Buffer.from(`${PDF_HEADER}${"0".repeat(ID_WIDTH)}\n`).copy(file);
  return file;
}

export function multipartBody(fileSize: number): Buffer {
  return Buffer.concat([HEAD, pdfBytes(fileSize), TAIL]);
}

/** The file inside a multipartBody. */
export function fileOf(body: Buffer): Buffer {
  return body.subarray(HEAD.length, body.length - TAIL.length);
}

/** The start of a body: everything before the file's bytes. */
export function multipartHead(): Buffer {
  return HEAD;
}

/** Writes `id` into a multipartBody's file, in place. */
export function stampBody(body: Buffer, id: bigint): void {
  body.write(id.toString(16).padStart(ID_WIDTH, "0").slice(-ID_WIDTH), ID_OFFSET, "latin1");
}

/** Length of a body whose file has `fileSize` bytes. */
export function multipartLength(fileSize: number): number {
  return HEAD.length + fileSize + TAIL.length;
}

/** The same body as multipartBody, generated chunk by chunk so a 100 MB upload costs the client no memory. */
export async function* streamedMultipartBody(fileSize: number): AsyncGenerator<Buffer> {
  yield HEAD;
  const first = pdfBytes(Math.min(fileSize, FILLER.length));
  yield first;
  for (let sent = first.length; sent < fileSize; sent += FILLER.length) {
    yield sent + FILLER.length <= fileSize ? FILLER : FILLER.subarray(0, fileSize - sent);
  }
  yield TAIL;
}
