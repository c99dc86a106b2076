import type { FastifyRequest } from "fastify";
import type { HttpTrigger } from "../../gen/docpipe/v1/pipe_pb.js";
import { acceptance, declaredTextFormat, detectFormat, FormatSniffer } from "../formats/detect.ts";
import type { FormatId } from "../formats/format-ids.ts";
import { FileTooLargeError, type FileStore, type StagedFile } from "../storage/file-store.ts";
import { Problem } from "./problems.ts";

/** A file received, staged and accepted by the trigger's settings; not yet committed. */
export interface ReceivedFile {
  staged: StagedFile;
  name: string;
  contentType: string;
  format: FormatId;
}

const BYTES_PER_MB = 1024 * 1024;

/** Multipart limits beside the file size: a few small fields are tolerated, and nothing else. */
const PART_LIMITS = { files: 2, fields: 20, fieldSize: 64 * 1024, parts: 32, headerPairs: 64 };

/**
 * Streams the one file part named "file" into staging while sniffing its format, then checks it
 * against the trigger. Every rejection leaves nothing behind: a staged file is discarded before
 * the problem is thrown.
 */
export async function receiveFile(request: FastifyRequest, store: FileStore, trigger: HttpTrigger): Promise<ReceivedFile> {
  if (!request.isMultipart()) {
    throw new Problem("not_multipart", 'send the document as multipart/form-data with one file part named "file"');
  }
  const maxBytes = trigger.maxSizeMb * BYTES_PER_MB;
  let received: (Omit<ReceivedFile, "format"> & { sniffer: FormatSniffer }) | undefined;
  try {
    // Busboy's own limit is one byte higher so that our meter (stage) trips first and the upload
    // stops at once: at busboy's limit it would truncate the file but read the rest of the body.
    for await (const part of request.parts({ limits: { ...PART_LIMITS, fileSize: maxBytes + 1 } })) {
      if (part.type === "field") {
        if (part.fieldname === "file") {
          throw new Problem("file_missing", 'the part "file" has no file name; send it as a file (curl -F "file=@document.pdf")');
        }
        continue;
      }
      if (part.fieldname !== "file") {
        throw new Problem("file_part_unexpected", `file parts must be named "file", got "${part.fieldname.slice(0, 100)}"`);
      }
      if (received !== undefined) throw new Problem("too_many_files", 'send exactly one file part named "file"');
      const sniffer = new FormatSniffer(declaredTextFormat(part.mimetype, part.filename) !== undefined);
      const staged = await store.stage(part.file, maxBytes, (chunk) => sniffer.push(chunk));
      received = { staged, sniffer, name: part.filename, contentType: part.mimetype };
    }
  } catch (error) {
    if (received !== undefined) await store.discard(received.staged);
    throw uploadProblem(error, trigger.maxSizeMb);
  }
  if (received === undefined) throw new Problem("file_missing", 'the request has no file part named "file"');
  const { staged, sniffer, name, contentType } = received;
  if (staged.size === 0) {
    await store.discard(staged);
    throw new Problem("file_empty", "the file is empty");
  }
  let detection;
  try {
    detection = await detectFormat({ ...sniffer.result(), path: staged.tempPath, fileName: name, contentType });
  } catch (error) {
    await store.discard(staged);
    throw error;
  }
  const verdict = acceptance(detection, trigger.acceptedFormats);
  if (!verdict.accepted) {
    await store.discard(staged);
    const detected = verdict.detectedFormat ?? "unknown";
    throw new Problem(
      "unsupported_format",
      `the file's format (${detected}) is not accepted by this pipe; accepted: ${trigger.acceptedFormats.join(", ")}`,
      { acceptedFormats: trigger.acceptedFormats, detectedFormat: verdict.detectedFormat },
    );
  }
  return { staged, name, contentType, format: verdict.format };
}

/** The problem for an error met while reading the multipart body. */
function uploadProblem(error: unknown, maxSizeMb: number): unknown {
  if (error instanceof Problem) return error;
  const code = (error as { code?: string }).code;
  if (error instanceof FileTooLargeError || code === "FST_REQ_FILE_TOO_LARGE") {
    return new Problem("file_too_large", `the file exceeds this pipe's limit of ${maxSizeMb} MB (${maxSizeMb * BYTES_PER_MB} bytes)`, { maxSizeMb });
  }
  if (code === "FST_FILES_LIMIT") return new Problem("too_many_files", 'send exactly one file part named "file"');
  if (code?.startsWith("FST_") || isMultipartSyntaxError(error)) {
    return new Problem("multipart_malformed", `the multipart body could not be read: ${(error as Error).message}`);
  }
  return error;
}

/** Busboy reports a broken body (bad boundary, truncated form) with plain Errors. */
function isMultipartSyntaxError(error: unknown): boolean {
  return error instanceof Error && /multipart|boundary|unexpected end of form|part header|malformed/i.test(error.message);
}
