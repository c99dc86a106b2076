import type { IncomingMessage } from "node:http";
import HeaderParser from "@fastify/busboy/deps/dicer/lib/HeaderParser.js";
import StreamSearch from "@fastify/busboy/deps/streamsearch/sbmh.js";
import basename from "@fastify/busboy/lib/utils/basename.js";
import parseParams from "@fastify/busboy/lib/utils/parseParams.js";

/**
 * Reads a multipart/form-data body part by part, taking the request's chunks only as its reader
 * asks for bytes: no stream is made per request, only the reader, its generators and the request's
 * own listeners (requestChunks).
 *
 * Ours rather than `@fastify/multipart`: busboy under it is two `Writable`s and a `Readable` per
 * part, and on Node 24 every `Writable` holds a function that V8 allocates in the old generation
 * (`WritableState`'s `onwrite`), as busboy's `x._read = function …` are; each keeps its parser, and
 * through it the request, alive past every young collection until a full one. Those collections
 * then copy every request since the last one, and their pauses were the 1 KiB submissions' slowest
 * percent (docs/decisions.md, "What a 1 KiB submission pays for"). The parsing itself is busboy's:
 * its boundary search, its header parser and its parameter decoding (RFC 2231/5987, charsets,
 * folders dropped from file names), so a body reads here as it read there. What differs is listed
 * on MultipartPart and MultipartError.
 */

/**
 * A part, described from its header: a file part has a `filename` parameter (busboy also took a
 * part of type application/octet-stream without one for a file, with no name); any other part is a
 * field, whose bytes are read past, not kept.
 */
export type MultipartPart =
  | { type: "field"; fieldname: string | undefined }
  | {
      type: "file";
      /** Undefined when the part's Content-Disposition has no `name`. */
      fieldname: string | undefined;
      /** Decoded, without folders ("dir/a.pdf" is "a.pdf"; "." and ".." are ""). */
      filename: string;
      /** The part's media type in lower case, without parameters; text/plain when it has none (busboy's default). */
      mimetype: string;
      /** The part's bytes, read from the request as they are asked for. */
      file: AsyncIterable<Buffer>;
    };

/** At most this many of each in one body; past one, reading stops with a MultipartError. */
export interface MultipartLimits {
  parts: number;
  files: number;
  fields: number;
  /** Header lines per part; further lines are not read. */
  headerPairs: number;
}

/** The body is not one multipart/form-data body, broke off, or passed a limit (`limit` says which). */
export class MultipartError extends Error {
  readonly limit: keyof MultipartLimits | undefined;

  constructor(message: string, limit?: keyof MultipartLimits, options?: ErrorOptions) {
    super(message, options);
    this.name = "MultipartError";
    this.limit = limit;
  }
}

/** A part's header block past this many bytes is cut there (busboy's limit). */
const MAX_HEADER_BYTES = 80 * 1024;
const CRLF = Buffer.from("\r\n");
const ONE_DASH = Buffer.from("-");
const DASH = 0x2d;

type Event = { kind: "part"; part: MultipartPart } | { kind: "bytes"; bytes: Buffer } | { kind: "file end" };
const FILE_END: Event = { kind: "file end" };

/** What the reader is in: before the first delimiter, a part's header block, a part's bytes. */
type Place = "preamble" | "header" | "skipped" | "field" | "file";

/**
 * The parts of `body` (the request), which the request's Content-Type says is multipart/form-data
 * with `boundary`. A part's bytes are read while its `file` is iterated, before the next part is
 * asked for; asking for it reads past what is left of the last. After the closing delimiter the rest
 * of the body is read and dropped, as busboy did (bytes left unread would stop the connection before
 * its next request). Ending early leaves the request open and unread, so that a refusal can still be
 * written on its connection (which the refusal then closes).
 */
export async function* readMultipart(body: AsyncIterator<Buffer>, boundary: string, limits: MultipartLimits): AsyncGenerator<MultipartPart> {
  const reader = new MultipartReader(body, boundary, limits);
  let whole = false;
  try {
    for (let event = await reader.next(); event !== undefined; event = await reader.next()) {
      // Bytes and ends of a file part its reader left unread are passed over.
      if (event.kind === "part") yield event.part;
    }
    whole = true;
  } finally {
    if (whole) void dropRest(body);
    // Not awaited: a read of the body may still be pending (a file part's reader that stopped while
    // waiting for bytes), and the body's iterator would end only after it, when the client sends more.
    else body.return?.().catch(() => {});
  }
}

/** Reads what follows the closing delimiter (an epilogue) to the body's end, dropping it. */
async function dropRest(body: AsyncIterator<Buffer>): Promise<void> {
  try {
    while ((await body.next()).done !== true);
  } catch {
    // The request failed after its form had ended: nothing of what it still held is used.
  }
}

/** Chunks of the request waiting to be read at which it is paused (until the reader wants more). */
const QUEUED_CHUNKS = 4;

/**
 * The request's chunks as they arrive, never joined; the request is paused while QUEUED_CHUNKS wait
 * for the reader, and once it stops. Not the stream's own iterator: each of its reads joins what
 * waits in the stream's buffer into a new Buffer, and at 10 MiB those copies brought twice the full
 * collections; nor `events.on`, whose two queues of 2,048 slots each were 30 KiB kept per 1 KiB
 * request (bench/README.md).
 */
export async function* requestChunks(request: IncomingMessage): AsyncGenerator<Buffer> {
  const queued: Buffer[] = [];
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const onData = (chunk: Buffer) => {
    queued.push(chunk);
    if (queued.length >= QUEUED_CHUNKS) request.pause();
    wake?.();
  };
  // An aborted request ends with an error, or with "close" alone (the form is then cut short).
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const onError = (error: Error) => {
    failure = error;
    wake?.();
  };
  request.on("data", onData).on("end", onEnd).on("close", onEnd).on("error", onError);
  try {
    for (;;) {
      const chunk = queued.shift();
      if (chunk !== undefined) yield chunk;
      else if (failure !== undefined) throw failure;
      else if (ended) return;
      else {
        request.resume();
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
  } finally {
    request.off("data", onData).off("end", onEnd).off("close", onEnd).off("error", onError);
    request.pause();
  }
}

/** The longest boundary taken, in bytes: RFC 2046 allows 70 characters; busboy's search, 252 (its needle, "\r\n--" and the boundary, is 256 bytes at most). */
const MAX_BOUNDARY_LENGTH = 252;

/**
 * The boundary of a multipart/form-data Content-Type, read as busboy reads it; a MultipartError
 * when it has none, or one longer than MAX_BOUNDARY_LENGTH.
 */
export function multipartBoundary(contentType: string): string {
  for (const parameter of parseParams(contentType).slice(1)) {
    if (Array.isArray(parameter) && parameter[0].toLowerCase() === "boundary" && parameter[1] !== undefined) {
      if (parameter[1].length === 0 || Buffer.byteLength(parameter[1]) > MAX_BOUNDARY_LENGTH) break;
      return parameter[1];
    }
  }
  throw new MultipartError(`the Content-Type has no boundary of 1 to ${MAX_BOUNDARY_LENGTH} bytes`);
}

/**
 * Busboy's Dicer (the delimiter framing) as a pull parser: each chunk pulled from the body is
 * searched for delimiters synchronously, and what it held (parts begun, bytes, ends) is queued for
 * the readers. Its quirks are Dicer's: a delimiter's trailing "--" ends the form, and what follows
 * it is not searched (readMultipart drops it).
 */
class MultipartReader {
  readonly #body: AsyncIterator<Buffer>;
  readonly #limits: MultipartLimits;
  readonly #search: StreamSearch;
  readonly #headers: HeaderParser;
  readonly #events: Event[] = [];
  #place: Place | undefined = "preamble";
  /** The chunk being searched: bytes reported within it are kept as views, others (the search's own buffer) copied. */
  #chunk: Buffer | undefined;
  #started = false;
  #sawBytes = false;
  /** The closing delimiter was read. */
  #finished = false;
  #justMatched = false;
  #dashes = 0;
  #parts = 0;
  #files = 0;
  #fields = 0;

  constructor(body: AsyncIterator<Buffer>, boundary: string, limits: MultipartLimits) {
    this.#body = body;
    this.#limits = limits;
    this.#search = new StreamSearch(`\r\n--${boundary}`);
    this.#search.on("info", (isMatch, data, start, end) => this.#onInfo(isMatch, data, start ?? 0, end ?? 0));
    this.#headers = new HeaderParser({ maxHeaderPairs: limits.headerPairs, maxHeaderSize: MAX_HEADER_BYTES });
    this.#headers.on("header", (header) => this.#onHeader(header));
  }

  /** The next event, pulling chunks from the body until there is one; undefined after the closing delimiter. */
  async next(): Promise<Event | undefined> {
    while (this.#events.length === 0) {
      if (this.#finished) return undefined;
      let chunk: IteratorResult<Buffer>;
      try {
        chunk = await this.#body.next();
      } catch (error) {
        throw new MultipartError("the request was closed before its body ended", undefined, { cause: error });
      }
      if (chunk.done === true) {
        // An empty body is a form without parts (as @fastify/multipart took it).
        if (!this.#sawBytes) return undefined;
        throw new MultipartError("Unexpected end of multipart data");
      }
      this.#push(chunk.value);
    }
    return this.#events.shift();
  }

  #push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#sawBytes = true;
    // The first delimiter has no line break before it: one is searched first, as Dicer does.
    if (!this.#started) {
      this.#started = true;
      this.#search.push(CRLF);
    }
    this.#chunk = chunk;
    this.#search.push(chunk);
    this.#chunk = undefined;
  }

  /** What the search found: `data[start, end)` before a delimiter (`isMatch`) or with none yet. Dicer's `_oninfo`. */
  #onInfo(isMatch: boolean, data: Buffer | undefined, start: number, end: number): void {
    let oneDash = false;
    if (this.#place === undefined && this.#justMatched && data !== undefined) {
      // Right after a delimiter: "--" closes the body; anything else begins a part.
      let index = start;
      while (this.#dashes < 2 && index < end) {
        if (data[index] !== DASH) {
          oneDash = this.#dashes === 1;
          this.#dashes = 0;
          break;
        }
        index++;
        this.#dashes++;
      }
      // Once two, they stay: whatever the rest of this chunk holds returns here (and no later chunk is searched).
      if (this.#dashes === 2) {
        this.#finished = true;
        return;
      }
      if (this.#dashes > 0) return;
    }
    this.#justMatched = false;
    if (this.#place === undefined) this.#beginPart();
    if (data !== undefined && start < end) {
      if (this.#place === "header") {
        if (oneDash) this.#headers.push(ONE_DASH);
        const used = this.#headers.push(data.subarray(start, end));
        if (this.#place !== "header" && used !== undefined && start + used < end) this.#onInfo(false, data, start + used, end);
      } else if (this.#place === "file") {
        const bytes = data.subarray(start, end);
        this.#events.push({ kind: "bytes", bytes: data === this.#chunk ? bytes : Buffer.from(bytes) });
      }
    }
    if (isMatch) {
      this.#headers.reset();
      if (this.#place === "file") this.#events.push(FILE_END);
      this.#place = undefined;
      this.#justMatched = true;
      this.#dashes = 0;
    }
  }

  #beginPart(): void {
    if (++this.#parts > this.#limits.parts) throw new MultipartError(`more than ${this.#limits.parts} parts`, "parts");
    this.#place = "header";
  }

  /** A part's header block, read: the part is a file, a field, or skipped (as busboy skips it). Busboy's Multipart. */
  #onHeader(header: Record<string, string[]>): void {
    const described = describePart(header);
    if (described === undefined) {
      this.#place = "skipped";
      return;
    }
    const { fieldname, filename, mimetype } = described;
    if (filename === undefined) {
      if (++this.#fields > this.#limits.fields) throw new MultipartError(`more than ${this.#limits.fields} fields`, "fields");
      this.#place = "field";
      this.#events.push({ kind: "part", part: { type: "field", fieldname } });
      return;
    }
    if (++this.#files > this.#limits.files) throw new MultipartError(`more than ${this.#limits.files} files`, "files");
    this.#place = "file";
    this.#events.push({ kind: "part", part: { type: "file", fieldname, filename, mimetype, file: this.#fileBytes() } });
  }

  /** The bytes of the file part begun last, up to its end. */
  async *#fileBytes(): AsyncGenerator<Buffer> {
    for (let event = await this.next(); event !== undefined; event = await this.next()) {
      if (event.kind === "file end") return;
      if (event.kind === "bytes") yield event.bytes;
    }
  }
}

/**
 * A part's name, file name and media type from its header, as busboy reads them; undefined for a
 * part busboy skips (no Content-Disposition, not form-data, or a name or file name holding a bare
 * line break).
 */
function describePart(header: Record<string, string[]>): { fieldname: string | undefined; filename: string | undefined; mimetype: string } | undefined {
  const disposition = header["content-disposition"]?.[0];
  if (disposition === undefined) return undefined;
  const parsed = parseParams(disposition);
  if (typeof parsed[0] !== "string" || parsed[0].toLowerCase() !== "form-data") return undefined;
  let fieldname: string | undefined;
  let filename: string | undefined;
  for (const parameter of parsed.slice(1)) {
    if (!Array.isArray(parameter) || parameter[1] === undefined) continue;
    const [key, value] = parameter;
    if (/^name$/i.test(key)) fieldname = value;
    else if (/^filename$/i.test(key)) filename = basename(value);
    else continue;
    if (/[\r\n]/.test(value)) return undefined;
  }
  return { fieldname, filename, mimetype: mediaType(header["content-type"]?.[0]) };
}

/** A part's media type in lower case, parameters dropped; text/plain when it has none (as busboy reads it). */
function mediaType(contentType: string | undefined): string {
  if (contentType === undefined || contentType.length === 0) return "text/plain";
  if (!/[; \t]/.test(contentType)) return contentType.toLowerCase();
  const [type] = parseParams(contentType);
  return typeof type === "string" && type.length > 0 ? type.toLowerCase() : "text/plain";
}
