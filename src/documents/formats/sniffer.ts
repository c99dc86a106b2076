import { detectLegacyEncoding, META_PRESCAN_BYTES, textEncoding, type TextEncoding, Utf32Decoder } from "./encoding.ts";
import { Utf8StreamValidator } from "./utf8-stream.ts";

/**
 * Files up to this size are detected from memory; larger ones from their staged file, where
 * file-type can seek (a zip's entries, a TIFF directory at the end). 64 KiB bounds the memory an
 * upload holds and keeps the many small uploads off the disk.
 */
export const HEAD_BYTES = 64 * 1024;

/** What a sniffer learned from the bytes of one upload. */
export interface SniffedBytes {
  /** The first HEAD_BYTES bytes (fewer when the file is shorter). */
  head: Uint8Array;
  /** True when `head` holds the whole file. */
  complete: boolean;
  /** True when the whole file is valid text in `encoding` with no NUL character, so it may be one of the text formats. */
  text: boolean;
  /** The text encoding the file declares or defaults to; undefined when text was not possible or the declared charset is unknown. */
  encoding?: TextEncoding;
}

/** What the client said about a possibly-text upload: its part's Content-Type, and whether it names HTML (whose `<meta charset>` counts). */
export interface TextDeclaration {
  contentType: string;
  html: boolean;
}

/** Checks a stream of chunks against one encoding. */
interface TextValidator {
  /** False as soon as the stream so far cannot be text in the encoding; later chunks are then ignored. */
  readonly valid: boolean;
  push(chunk: Uint8Array): void;
  /** True when the whole stream was valid, complete text without NUL. */
  end(): boolean;
}

/**
 * Fed every chunk of an upload as it streams to storage (FileStore.stage's `inspect`), it keeps the
 * head and tracks whether the file is text, in memory bounded by HEAD_BYTES whatever the file size.
 * The encoding is decided once the first META_PRESCAN_BYTES are in (a byte order mark, the declared
 * charset, an HTML meta charset; see textEncoding), then every byte is checked against it.
 */
export class FormatSniffer {
  /** Copies of the head's pieces, joined once at the end (small uploads allocate only their size). */
  readonly #headParts: Uint8Array[] = [];
  #headLength = 0;
  #complete = true;
  #maybeText: boolean;
  readonly #declaration: TextDeclaration;
  #encoding: TextEncoding | undefined;
  /** Undefined until the encoding is decided. */
  #validator: TextValidator | undefined;
  /** Whether a legacy encoding was looked for (see #detectLegacyEncoding). */
  #legacyTried = false;

  /**
   * `textPossible`: whether the upload's declared type or name is a text format (declaredTextFormat).
   * When it is not, text is never its format, and its bytes are not scanned for it.
   */
  constructor(textPossible = true, declaration: TextDeclaration = { contentType: "", html: false }) {
    this.#maybeText = textPossible;
    this.#declaration = declaration;
  }

  push(chunk: Uint8Array): void {
    const headBefore = this.#headLength;
    this.#keepHead(chunk);
    if (!this.#maybeText) return;
    if (this.#validator !== undefined) return this.#check(chunk);
    if (this.#headLength < META_PRESCAN_BYTES) return;
    // Undecided until now: the chunks so far are in the head, which the decision checks whole; then the rest of this chunk.
    this.#decide();
    if (this.#maybeText) this.#check(chunk.subarray(this.#headLength - headBefore));
  }

  result(): SniffedBytes {
    const head = Buffer.concat(this.#headParts, this.#headLength);
    if (this.#maybeText && this.#validator === undefined) this.#decide(head);
    const text = this.#maybeText && this.#validator!.end();
    return { head, complete: this.#complete, text, ...(this.#encoding === undefined ? {} : { encoding: this.#encoding }) };
  }

  #decide(head = Buffer.concat(this.#headParts, this.#headLength)): void {
    this.#encoding = textEncoding(head, this.#declaration.contentType, this.#declaration.html);
    if (this.#encoding === undefined) {
      this.#maybeText = false;
      return;
    }
    this.#validator = validatorFor(this.#encoding.name);
    this.#check(head);
  }

  #check(chunk: Uint8Array): void {
    this.#validator!.push(chunk);
    if (!this.#validator!.valid && this.#encoding?.source === "default" && !this.#legacyTried) this.#detectLegacyEncoding(chunk);
    // Binary files fail within their first chunk; after that nothing more is scanned.
    this.#maybeText = this.#validator!.valid;
  }

  /**
   * Text that declares nothing and is not UTF-8 may be in a legacy encoding (a CSV saved on Windows):
   * the one detected from the head is checked instead, from the start while the whole file so far
   * is in the head, else from this chunk on. Tried once: a binary file fails in that encoding too.
   */
  #detectLegacyEncoding(chunk: Uint8Array): void {
    this.#legacyTried = true;
    const head = Buffer.concat(this.#headParts, this.#headLength);
    const detected = detectLegacyEncoding(head);
    if (detected === undefined) return;
    this.#encoding = detected;
    this.#validator = validatorFor(detected.name);
    this.#validator.push(this.#complete ? head : chunk);
  }

  #keepHead(chunk: Uint8Array): void {
    const room = HEAD_BYTES - this.#headLength;
    if (chunk.length > room) this.#complete = false;
    if (room === 0) return;
    // A copy, not a view: a view would keep the stream's (possibly pooled) chunk alive.
    const kept = new Uint8Array(chunk.subarray(0, room));
    this.#headParts.push(kept);
    this.#headLength += kept.length;
  }
}

function validatorFor(encoding: string): TextValidator {
  return encoding === "utf-8" ? new Utf8Validator() : new DecodingValidator(encoding);
}

/** UTF-8, the common case: Node's SIMD isUtf8 and a NUL byte search, no string allocated. */
class Utf8Validator implements TextValidator {
  readonly #utf8 = new Utf8StreamValidator();
  #nul = false;

  get valid(): boolean {
    return !this.#nul && this.#utf8.valid;
  }

  push(chunk: Uint8Array): void {
    if (!this.valid) return;
    this.#nul = chunk.includes(0);
    this.#utf8.push(chunk);
  }

  end(): boolean {
    return !this.#nul && this.#utf8.end();
  }
}

/** Any other encoding: a strict streaming decoder, whose output must hold no NUL. */
class DecodingValidator implements TextValidator {
  readonly #decoder: { decode(chunk: Uint8Array, stream: boolean): string };
  #valid = true;

  constructor(encoding: string) {
    if (encoding === "utf-32le" || encoding === "utf-32be") {
      this.#decoder = new Utf32Decoder(encoding === "utf-32le");
    } else {
      const decoder = new TextDecoder(encoding, { fatal: true });
      this.#decoder = { decode: (chunk, stream) => decoder.decode(chunk, { stream }) };
    }
  }

  get valid(): boolean {
    return this.#valid;
  }

  push(chunk: Uint8Array): void {
    this.#decode(chunk, true);
  }

  end(): boolean {
    this.#decode(new Uint8Array(0), false);
    return this.#valid;
  }

  #decode(chunk: Uint8Array, stream: boolean): void {
    if (!this.#valid) return;
    try {
      this.#valid = !this.#decoder.decode(chunk, stream).includes("\u0000");
    } catch {
      this.#valid = false;
    }
  }
}
