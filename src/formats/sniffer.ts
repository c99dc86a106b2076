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
  /** True when the whole file is valid UTF-8 with no NUL byte, so it may be one of the text formats. */
  text: boolean;
}

/**
 * Fed every chunk of an upload as it streams to storage (FileStore.stage's `inspect`), it keeps the
 * head and tracks whether the file is text, in memory bounded by HEAD_BYTES whatever the file size.
 */
export class FormatSniffer {
  /** Copies of the head's pieces, joined once at the end (small uploads allocate only their size). */
  readonly #headParts: Uint8Array[] = [];
  #headLength = 0;
  #complete = true;
  #maybeText: boolean;
  readonly #utf8 = new Utf8StreamValidator();

  /**
   * `textPossible`: whether the upload's declared type or name is a text format (declaredTextFormat).
   * When it is not, text is never its format, and its bytes are not scanned for it.
   */
  constructor(textPossible = true) {
    this.#maybeText = textPossible;
  }

  push(chunk: Uint8Array): void {
    this.#keepHead(chunk);
    // Binary files fail within their first chunk; after that nothing more is scanned.
    if (!this.#maybeText) return;
    if (chunk.includes(0)) {
      this.#maybeText = false;
      return;
    }
    this.#utf8.push(chunk);
    this.#maybeText = this.#utf8.valid;
  }

  result(): SniffedBytes {
    return {
      head: Buffer.concat(this.#headParts, this.#headLength),
      complete: this.#complete,
      text: this.#maybeText && this.#utf8.end(),
    };
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
