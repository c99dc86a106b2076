import { inflateRawSync } from "node:zlib";
import { decodeUtf8 } from "./text.ts";

/** The most the parts read from one package may inflate to, together; a package that needs more is refused. */
const MAX_INFLATED_BYTES = 50 * 1024 * 1024;

/** One file of a zip archive, as its central directory describes it. */
interface ZipEntry {
  name: string;
  flags: number;
  method: number;
  compressedSize: number;
  /** The uncompressed size the archive declares; checked against what the data inflates to. */
  size: number;
  localHeaderOffset: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_FILE_HEADER = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
/** What a 16- or 32-bit field holds when the real value is in a ZIP64 record. */
const ZIP64_COUNT = 0xffff;
const ZIP64_VALUE = 0xffffffff;
const STORED = 0;
const DEFLATED = 8;
const ENCRYPTED_FLAG = 0x1;

/**
 * The parts of a zip package whose names `wanted` accepts, decoded as UTF-8. Each is inflated with
 * zlib's output cap set to what is left of `maxBytes`, so a part that lies about its size stops at
 * the budget: neither memory nor CPU grows with what a bomb would inflate to.
 */
export function readParts(bytes: Uint8Array, wanted: (name: string) => boolean, maxBytes = MAX_INFLATED_BYTES): Map<string, string> {
  return packageReader(bytes, maxBytes)(wanted);
}

/**
 * Reads parts of a zip package as readParts does, in as many calls as a package needs (one part
 * names the next: a relationship, a manifest), all of them within one budget of `maxBytes`.
 */
export function packageReader(bytes: Uint8Array, maxBytes = MAX_INFLATED_BYTES): (wanted: (name: string) => boolean) => Map<string, string> {
  const archive = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const directory = centralDirectory(archive);
  let remaining = maxBytes;
  return (wanted) => {
    const entries = directory.filter((entry) => wanted(entry.name));
    // Refuse what the archive itself declares before inflating anything.
    if (sum(entries.map((entry) => entry.size)) > remaining) throw tooLarge(maxBytes);
    // Entries sharing their compressed data would let a small archive be inflated many times over.
    if (sum(entries.map((entry) => entry.compressedSize)) > archive.length) throw new Error("its entries overlap");
    const parts = new Map<string, string>();
    for (const entry of entries) {
      const data = readEntry(archive, entry, remaining);
      if (data === undefined) throw tooLarge(maxBytes);
      remaining -= data.length;
      parts.set(entry.name, decodeUtf8(data));
    }
    return parts;
  };
}

/** The entries listed by the central directory of a zip archive (no ZIP64 records: only entries or archives past 4 GB need them). */
function centralDirectory(archive: Buffer): ZipEntry[] {
  const end = endOfCentralDirectory(archive);
  const count = archive.readUInt16LE(end + 10);
  const offset = archive.readUInt32LE(end + 16);
  if (count === ZIP64_COUNT || offset === ZIP64_VALUE) throw zip64();
  const entries: ZipEntry[] = [];
  for (let at = offset, index = 0; index < count; index++) {
    if (at + 46 > archive.length || archive.readUInt32LE(at) !== CENTRAL_FILE_HEADER) throw new Error("its zip central directory is corrupt");
    const nameEnd = at + 46 + archive.readUInt16LE(at + 28);
    const entry: ZipEntry = {
      name: archive.toString("utf8", at + 46, Math.min(nameEnd, archive.length)),
      flags: archive.readUInt16LE(at + 8),
      method: archive.readUInt16LE(at + 10),
      compressedSize: archive.readUInt32LE(at + 20),
      size: archive.readUInt32LE(at + 24),
      localHeaderOffset: archive.readUInt32LE(at + 42),
    };
    if ([entry.compressedSize, entry.size, entry.localHeaderOffset].includes(ZIP64_VALUE)) throw zip64();
    entries.push(entry);
    at = nameEnd + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
  }
  return entries;
}

/** The offset of the end-of-central-directory record: the last one, searched back over the longest comment allowed. */
function endOfCentralDirectory(archive: Buffer): number {
  for (let at = archive.length - 22; at >= Math.max(0, archive.length - 22 - 0xffff); at--) {
    if (archive.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new Error("it is not a zip archive");
}

/** A part of the package is encrypted: the document cannot be read without its password. */
export class EncryptedPartError extends Error {
  override name = "EncryptedPartError";
}

/** The uncompressed data of one entry, or undefined when it holds more than `maxBytes`. */
function readEntry(archive: Buffer, entry: ZipEntry, maxBytes: number): Buffer | undefined {
  if ((entry.flags & ENCRYPTED_FLAG) !== 0) throw new EncryptedPartError(`its part ${entry.name} is encrypted`);
  const data = compressedData(archive, entry);
  const inflated = entry.method === STORED ? data : inflateAtMost(entry, data, maxBytes);
  if (inflated === undefined || inflated.length > maxBytes) return undefined;
  if (inflated.length !== entry.size) throw new Error(`its part ${entry.name} is corrupt: it declares ${entry.size} bytes but holds ${inflated.length}`);
  return inflated;
}

/** The compressed bytes of an entry: after its local header, whose name and extra field may differ from the central ones. */
function compressedData(archive: Buffer, entry: ZipEntry): Buffer {
  const at = entry.localHeaderOffset;
  if (at + 30 > archive.length || archive.readUInt32LE(at) !== LOCAL_FILE_HEADER) throw new Error(`its part ${entry.name} is corrupt`);
  const start = at + 30 + archive.readUInt16LE(at + 26) + archive.readUInt16LE(at + 28);
  if (start + entry.compressedSize > archive.length) throw new Error(`its part ${entry.name} is corrupt`);
  return archive.subarray(start, start + entry.compressedSize);
}

/** Raw deflate data inflated, or undefined once it passes `maxBytes`: zlib stops there, however much more the data holds. */
function inflateAtMost(entry: ZipEntry, data: Buffer, maxBytes: number): Buffer | undefined {
  if (entry.method !== DEFLATED) throw new Error(`its part ${entry.name} uses zip compression method ${entry.method}, which is not supported`);
  try {
    return inflateRawSync(data, { maxOutputLength: maxBytes + 1 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") return undefined;
    throw error;
  }
}

function tooLarge(maxBytes: number): Error {
  return new Error(`its parts inflate to more than ${maxBytes / (1024 * 1024)} MB`);
}

function zip64(): Error {
  return new Error("it is a ZIP64 archive, which is not supported");
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
