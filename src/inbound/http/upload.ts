import type { FastifyRequest } from "fastify";
import type { HttpTrigger } from "../../../gen/docpipe/v1/pipe_pb.js";
import { acceptance, declaredTextFormat, detectFormat, FormatSniffer } from "../../documents/formats/detect.ts";
import { isBaseName, isPrintable, isTooLongFileName, MAX_FILE_NAME_BYTES } from "../../documents/formats/file-names.ts";
import type { TextEncoding } from "../../documents/formats/encoding.ts";
import type { FormatId } from "../../documents/formats/format-ids.ts";
import { type DocumentStore, FileTooLargeError, type StagedFile } from "../../data/storage/document-store.ts";
import { stepTiming } from "../../platform/observability/step-timing.ts";
import { isFileSystemOutage } from "../../data/storage/outages.ts";
import { type MultipartLimits, MultipartError, multipartBoundary, readMultipart, requestChunks } from "./multipart.ts";
import { Problem } from "./problems.ts";

/** A file received, staged and accepted by the trigger's settings; not yet committed. */
export interface ReceivedFile {
  staged: StagedFile;
  name: string;
  contentType: string;
  format: FormatId;
}

const BYTES_PER_MB = 1024 * 1024;

/** Multipart limits: a few small fields are tolerated, and nothing else. */
const PART_LIMITS: MultipartLimits = { files: 2, fields: 20, parts: 32, headerPairs: 64 };

/** The body a multipart/form-data request's content-type parser gives (the body itself is read by receiveFile). */
export const MULTIPART_BODY = Symbol("multipart/form-data");

/**
 * Streams the one file part named "file" into staging while sniffing its format, then checks it
 * against the trigger. Every rejection leaves nothing behind: a staged file is discarded before
 * the problem is thrown.
 */
export async function receiveFile(request: FastifyRequest, store: DocumentStore, trigger: HttpTrigger): Promise<ReceivedFile> {
  if (request.body !== MULTIPART_BODY) {
    throw new Problem("not_multipart", 'send the document as multipart/form-data with one file part named "file"');
  }
  const maxBytes = trigger.maxSizeMb * BYTES_PER_MB;
  // A body that ended before the checks above let us read it (the client closed it, or Node's
  // parser refused it and answered 400): the multipart reader would wait for it for ever, holding
  // the request's Idempotency-Key and the shutdown. Checked in the tick that starts the reader.
  if (request.raw.destroyed || request.raw.errored !== null) {
    throw new Problem("multipart_malformed", "the request was closed before its body was read");
  }
  let received: StagedStream | undefined;
  let timed = stepTiming?.now();
  try {
    const boundary = multipartBoundary(request.headers["content-type"]!);
    for await (const part of readMultipart(requestChunks(request.raw), boundary, PART_LIMITS)) {
      if (part.type === "field") {
        if (part.fieldname === "file") {
          throw new Problem("file_missing", 'the part "file" has no file name; send it as a file (curl -F "file=@document.pdf")');
        }
        continue;
      }
      // A part without a name (no `name=` in its Content-Disposition) has none at all.
      if (part.fieldname !== "file") {
        const named = typeof part.fieldname === "string" ? `got "${part.fieldname.slice(0, 100)}"` : "got a part without a name";
        throw new Problem("file_part_unexpected", `file parts must be named "file", ${named}`);
      }
      if (received !== undefined) throw new Problem("too_many_files", 'send exactly one file part named "file"');
      // Judged from the part's header, before a byte of it is staged.
      if (!isPrintable(part.filename)) {
        throw new Problem("file_name_invalid", "the file name holds control characters (NUL, line breaks, escapes) or unpaired surrogates; rename the file");
      }
      // The multipart reader drops a name's folders ("dir/a.pdf" is "a.pdf"): "..", "." and "dir/" leave none.
      if (!isBaseName(part.filename)) throw new Problem("file_name_invalid", 'the file name is only folders or "." or ".."; send the file under its own name');
      if (isTooLongFileName(part.filename)) throw fileNameTooLong(part.filename);
      if (!isPrintable(part.mimetype)) throw new Problem("multipart_malformed", "the file part's Content-Type holds control characters");
      timed = stepTiming?.since("multipart: to the file part", timed!);
      received = await stageStream(store, part.file, part.filename, part.mimetype, maxBytes);
      timed = stepTiming?.now();
    }
    stepTiming?.since("multipart: the body's end", timed!);
  } catch (error) {
    if (received !== undefined) await store.discard(received.staged);
    throw uploadProblem(error, trigger.maxSizeMb);
  }
  if (received === undefined) throw new Problem("file_missing", 'the request has no file part named "file"');
  return acceptStaged(store, received, trigger.acceptedFormats);
}

/** A file staged with what its bytes told the sniffer; not yet judged. */
export interface StagedStream {
  staged: StagedFile;
  sniffer: FormatSniffer;
  name: string;
  contentType: string;
}

/**
 * Streams a file into staging while sniffing its format (what the trigger's routes share). Past
 * `maxBytes` the stream stops at once with FileTooLargeError and nothing is kept.
 */
export async function stageStream(
  store: DocumentStore,
  stream: AsyncIterable<Buffer>,
  name: string,
  contentType: string,
  maxBytes: number,
): Promise<StagedStream> {
  const declaredText = declaredTextFormat(contentType, name);
  const sniffer = new FormatSniffer(declaredText !== undefined, { contentType, html: declaredText === "html" });
  const staged = await store.stage(stream, maxBytes, (chunk) => sniffer.push(chunk));
  return { staged, sniffer, name, contentType };
}

/**
 * Judges a staged file against the accepted formats: empty (`file_empty`) or of another format
 * (`unsupported_format`) is discarded and refused with a Problem; else it is returned, still staged.
 */
export async function acceptStaged(store: DocumentStore, received: StagedStream, acceptedFormats: readonly string[]): Promise<ReceivedFile> {
  const { staged, sniffer, name, contentType } = received;
  if (staged.size === 0) {
    await store.discard(staged);
    throw new Problem("file_empty", "the file is empty");
  }
  const timed = stepTiming?.now();
  const sniffed = sniffer.result();
  let detection;
  try {
    detection = await detectFormat({ ...sniffed, path: staged.tempPath, fileName: name, contentType });
  } catch (error) {
    await store.discard(staged);
    throw error;
  }
  stepTiming?.since("format detection", timed!);
  const verdict = acceptance(detection, acceptedFormats);
  if (!verdict.accepted) {
    await store.discard(staged);
    const detected = verdict.detectedFormat ?? "unknown";
    const textHint = detection.format === undefined && declaredTextFormat(contentType, name) !== undefined ? `. ${undeclaredTextHint(sniffed.encoding)}` : "";
    throw new Problem(
      "unsupported_format",
      `the file's format (${detected}) is not accepted by this pipe; accepted: ${acceptedFormats.join(", ")}${textHint}`,
      { acceptedFormats, detectedFormat: verdict.detectedFormat },
    );
  }
  return { staged, name, contentType, format: verdict.format };
}

/** The refusal of a name past MAX_FILE_NAME_BYTES. */
export function fileNameTooLong(name: string): Problem {
  return new Problem(
    "file_name_invalid",
    `the file name is ${Buffer.byteLength(name)} bytes long in UTF-8; at most ${MAX_FILE_NAME_BYTES} are taken (as file systems hold); shorten it`,
  );
}

/**
 * Why a file declared as text was not read as text, and how to fix it: its bytes are not valid in
 * the encoding it has (UTF-8 unless it says otherwise), or it names a charset we do not know. The
 * multipart reader keeps only the media type of a file part (as busboy did), so a
 * charset in the part's Content-Type never reaches us: the ways that work are the ones named here.
 */
function undeclaredTextHint(encoding: TextEncoding | undefined): string {
  if (encoding === undefined) return "Its declared charset is not one we know; use an encoding label such as utf-8, utf-16le or windows-1252.";
  const declared = encoding.source === "default" ? "UTF-8 (no charset is declared)" : encoding.name;
  return (
    `Its bytes are not valid ${declared} text without NUL characters. `
    + "Save it as UTF-8, start it with a byte order mark (UTF-16 or UTF-32), "
    + 'or, for HTML, declare its charset with <meta charset="windows-1252"> (or the one it uses) near the top.'
  );
}

/** The problem for an error met while reading the multipart body. */
function uploadProblem(error: unknown, maxSizeMb: number): unknown {
  if (error instanceof Problem) return error;
  if (error instanceof FileTooLargeError) {
    return new Problem("file_too_large", `the file exceeds this pipe's limit of ${maxSizeMb} MB (${maxSizeMb * BYTES_PER_MB} bytes)`, { maxSizeMb });
  }
  if (error instanceof MultipartError) {
    if (error.limit === "files") return new Problem("too_many_files", 'send exactly one file part named "file"');
    return new Problem("multipart_malformed", `the multipart body could not be read: ${error.message}`);
  }
  // The staging folder failed (disk full, out of descriptors): the server's trouble, for a retry.
  if (isFileSystemOutage(error)) {
    return new Problem("service_unavailable", "the upload could not be staged; retry", {}, { "retry-after": "1" }, error);
  }
  return error;
}
