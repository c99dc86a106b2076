import { fileTypeFromBuffer, fileTypeFromFile, type FileTypeResult } from "file-type";
import type { FormatId } from "./format-ids.ts";
import { listsContentTypes } from "./package-parts.ts";
import type { SniffedBytes } from "./sniffer.ts";

import { FormatSniffer } from "./sniffer.ts";

export { FormatSniffer, HEAD_BYTES } from "./sniffer.ts";

/** One upload as the edge knows it once it is staged: its sniffed bytes, where it lies, what the client said. */
export interface Upload extends SniffedBytes {
  /** The staged file (StagedFile.tempPath, before commit), read when `head` is not the whole file and does not decide. */
  path: string;
  /** The client's file name; only its extension is used, and only for text formats. */
  fileName: string;
  /** The part's declared Content-Type; only used for text formats. */
  contentType: string;
}

export interface Detection {
  /** Our format id, when the file is one of the formats we take. */
  format: FormatId | undefined;
  /** What to report: our id, file-type's extension for a binary type we do not take (e.g. "zip"), or null. */
  detectedFormat: string | null;
}

export type Acceptance = { accepted: true; format: FormatId } | { accepted: false; detectedFormat: string | null; acceptedFormats: readonly string[] };

type TextFormatId = Extract<FormatId, "txt" | "csv" | "json" | "html" | "md" | "eml">;

/**
 * file-type's extension -> our id. Anything else it finds is a format we do not take; in
 * particular the TIFF-based camera raws (cr2, nef, arw, dng), avif, macro-enabled and template
 * Office files (docm, xltx, ...). file-type reports every HEIF still and sequence brand as "heic".
 */
const FORMAT_BY_FILE_TYPE_EXT: ReadonlyMap<string, FormatId> = new Map([
  ["pdf", "pdf"],
  ["jpg", "jpeg"],
  ["png", "png"],
  ["apng", "png"], // an animated PNG is a valid PNG (readers that ignore animation show its first frame)
  ["tif", "tiff"],
  ["heic", "heic"],
  ["webp", "webp"],
  ["gif", "gif"],
  ["docx", "docx"],
  ["xlsx", "xlsx"],
  ["pptx", "pptx"],
  ["odt", "odt"],
  ["ods", "ods"],
  ["rtf", "rtf"],
  ["epub", "epub"],
]);

// Maps, not object literals: client-chosen keys such as "constructor" must not hit Object.prototype.
const TEXT_FORMAT_BY_MEDIA_TYPE: ReadonlyMap<string, TextFormatId> = new Map([
  ["text/plain", "txt"],
  ["text/csv", "csv"],
  ["application/json", "json"],
  ["text/html", "html"],
  ["text/markdown", "md"],
  ["text/x-markdown", "md"],
  ["message/rfc822", "eml"],
]);

const TEXT_FORMAT_BY_EXTENSION: ReadonlyMap<string, TextFormatId> = new Map([
  ["txt", "txt"],
  ["csv", "csv"],
  ["json", "json"],
  ["html", "html"],
  ["htm", "html"],
  ["md", "md"],
  ["markdown", "md"],
  ["eml", "eml"],
]);

/**
 * Decides an upload's format from its bytes. A binary format we take wins (file-type's magic
 * bytes; OOXML by the zip's [Content_Types].xml). Otherwise a file that is wholly valid UTF-8
 * without NUL is the text format its declared type or extension names; the name alone never
 * decides. Text is checked before an unsupported binary match so that text whose first bytes
 * happen to be a weak magic number ("BM..." is bmp, "ID3..." mp3) is still text.
 */
export async function detectFormat(upload: Upload): Promise<Detection> {
  const fileType = await detectFileType(upload);
  const binary = fileType && FORMAT_BY_FILE_TYPE_EXT.get(fileType.ext);
  if (binary) return { format: binary, detectedFormat: binary };
  const text = upload.text ? declaredTextFormat(upload.contentType, upload.fileName) : undefined;
  if (text) return { format: text, detectedFormat: text };
  return { format: undefined, detectedFormat: fileType?.ext ?? null };
}

/** The format of a file held in memory whole (an email's attachment), decided as an upload's is. */
export async function detectBufferedFormat(bytes: Uint8Array, fileName: string, contentType: string): Promise<FormatId | undefined> {
  const declared = declaredTextFormat(contentType, fileName);
  const sniffer = new FormatSniffer(declared !== undefined, { contentType, html: declared === "html" });
  sniffer.push(bytes);
  return (await detectFormat({ ...sniffer.result(), head: bytes, complete: true, path: "", fileName, contentType })).format;
}

/** Whether a pipe that takes `acceptedFormats` takes a file detected as `detection`. */
export function acceptance(detection: Detection, acceptedFormats: readonly string[]): Acceptance {
  const { format, detectedFormat } = detection;
  if (format !== undefined && acceptedFormats.includes(format)) return { accepted: true, format };
  return { accepted: false, detectedFormat, acceptedFormats };
}

/**
 * The text format a client declared, by Content-Type or else by file extension. Many clients send
 * text/plain for any text file, so a more specific extension (data.csv) refines it.
 */
export function declaredTextFormat(contentType: string, fileName: string): TextFormatId | undefined {
  const byType = TEXT_FORMAT_BY_MEDIA_TYPE.get(mediaType(contentType));
  const byExtension = TEXT_FORMAT_BY_EXTENSION.get(extension(fileName));
  if (byType === "txt") return byExtension ?? byType;
  return byType ?? byExtension;
}

/** "Text/CSV; charset=utf-8" -> "text/csv". */
export function mediaType(contentType: string): string {
  return contentType.split(";", 1)[0]!.trim().toLowerCase();
}

/** "Report.Final.CSV" -> "csv"; "" when the name has no extension. */
export function extension(fileName: string): string {
  return /\.([^./\\]+)$/.exec(fileName)?.[1]?.toLowerCase() ?? "";
}

/**
 * file-type's answers from the head that more of the file can change: a zip may be an OOXML document
 * (decided by its [Content_Types].xml), and when the head ends before that entry file-type guesses
 * docx, xlsx or pptx from folder names alone (a plain zip holding "xl/", a macro-enabled .docm); a
 * TIFF may be a camera raw (decided by its directories); and no answer may become one.
 */
const HEAD_NOT_CONCLUSIVE = new Set(["zip", "docx", "xlsx", "pptx", "tif"]);

/**
 * What file-type answers for a file that starts with "%PDF" (no other signature it knows starts so).
 * Answered here first: PDFs are most uploads, and file-type tries about a hundred signatures before
 * it, each turned into bytes on the spot, and a 4 KiB buffer per call: a tenth of what the edge
 * allocated per 1 KiB submission.
 */
const PDF_SIGNATURE = Buffer.from("%PDF");
const PDF_FILE_TYPE: FileTypeResult = { ext: "pdf", mime: "application/pdf" };

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && Buffer.compare(bytes.subarray(0, prefix.length), prefix) === 0;
}

/**
 * file-type's answer from the head in memory, read from the staged file only when the head is not
 * the whole file and not conclusive: most formats are told by their first bytes, and a large PDF or
 * image is then detected without opening its file again.
 */
async function detectFileType(upload: Upload): Promise<FileTypeResult | undefined> {
  if (startsWith(upload.head, PDF_SIGNATURE)) return PDF_FILE_TYPE;
  const fromHead = await fileTypeFromBuffer(upload.head);
  const found = upload.complete || (fromHead !== undefined && !HEAD_NOT_CONCLUSIVE.has(fromHead.ext)) ? fromHead : await fileTypeFromFile(upload.path);
  // An Office package only when its zip lists [Content_Types].xml (see listsContentTypes).
  if (found !== undefined && OFFICE_PACKAGES.has(found.ext) && !(await listsContentTypes(upload.complete ? { bytes: upload.head } : { path: upload.path }))) {
    return { ext: "zip", mime: "application/zip" } as FileTypeResult;
  }
  return found;
}

/** file-type's extensions for the Office Open XML packages we take. */
const OFFICE_PACKAGES = new Set(["docx", "xlsx", "pptx"]);
