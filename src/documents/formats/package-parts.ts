import { open } from "node:fs/promises";

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
/** The end record is 22 bytes and its comment at most 65,535: it lies in the last 65,557 bytes. */
const TAIL_BYTES = 22 + 0xffff;
/** What a 32-bit field holds when the real value is in a ZIP64 record. */
const ZIP64_VALUE = 0xffffffff;
/** A central directory read at most: 16 MB lists about 200,000 parts, far past any Office file's. */
const MAX_CENTRAL_DIRECTORY = 16 * 1024 * 1024;
const CONTENT_TYPES = Buffer.from("[Content_Types].xml");

/** Bytes of a zip archive at an offset: from memory, or from its file. */
type ReadAt = (offset: number, length: number) => Promise<Buffer>;

/**
 * Whether a zip archive's central directory lists `[Content_Types].xml`, the part that makes a zip
 * an Office Open XML package. file-type decides docx, xlsx and pptx by that part when it finds it,
 * but guesses them from folder names (`word/`, `xl/`) when the zip ends before it: a 78-byte zip
 * cut off after a `word/evil.bin` header was accepted as a Word document. Reads the archive's tail
 * and its central directory only. A ZIP64 archive is not judged here (true): none of our uploads
 * is large enough to need one, and a writer that uses it anyway is not refused for it.
 */
export async function listsContentTypes(source: { bytes: Uint8Array } | { path: string }): Promise<boolean> {
  if ("bytes" in source) {
    const bytes = Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength);
    return centralDirectoryLists(bytes.length, async (offset, length) => bytes.subarray(offset, offset + length));
  }
  const file = await open(source.path, "r");
  try {
    const { size } = await file.stat();
    return await centralDirectoryLists(size, async (offset, length) => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await file.read(buffer, 0, length, offset);
      return buffer.subarray(0, bytesRead);
    });
  } finally {
    await file.close();
  }
}

async function centralDirectoryLists(size: number, readAt: ReadAt): Promise<boolean> {
  const tailStart = Math.max(0, size - TAIL_BYTES);
  const tail = await readAt(tailStart, size - tailStart);
  let end = -1;
  for (let at = tail.length - 22; at >= 0; at--) {
    if (tail.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) {
      end = at;
      break;
    }
  }
  if (end === -1) return false;
  const directorySize = tail.readUInt32LE(end + 12);
  const directoryOffset = tail.readUInt32LE(end + 16);
  if (directorySize === ZIP64_VALUE || directoryOffset === ZIP64_VALUE) return true;
  if (directoryOffset + directorySize > size || directorySize > MAX_CENTRAL_DIRECTORY) return false;
  const directory = await readAt(directoryOffset, directorySize);
  for (let at = 0; at + 46 <= directory.length && directory.readUInt32LE(at) === CENTRAL_FILE_HEADER; ) {
    const nameLength = directory.readUInt16LE(at + 28);
    const name = directory.subarray(at + 46, at + 46 + nameLength);
    if (name.equals(CONTENT_TYPES)) return true;
    at += 46 + nameLength + directory.readUInt16LE(at + 30) + directory.readUInt16LE(at + 32);
  }
  return false;
}
