/**
 * The character encoding of a text upload, decided the way browsers decide it for a page: a byte
 * order mark wins, then a charset the client declared (the part's Content-Type), then, for HTML, a
 * `<meta charset>` near the top, and otherwise UTF-8; text that is not valid UTF-8 and declares
 * nothing is in a legacy encoding detected from its bytes (detectLegacyEncoding). The same rules run at the edge (is this text?)
 * and in the parse step (decode it), so both always agree.
 */

/** A WHATWG encoding name ("utf-8", "utf-16le", "windows-1252", ...) or one of our UTF-32 names. */
export type TextEncodingName = string;

import chardet from "chardet";

/** How an encoding was decided; reported by the parse step beside the name. */
export type EncodingSource = "bom" | "content-type" | "meta" | "detected" | "default";

export interface TextEncoding {
  name: TextEncodingName;
  source: EncodingSource;
}

/** HTML declares its charset within the first 1024 bytes (the HTML standard's prescan length). */
export const META_PRESCAN_BYTES = 1024;

/** UTF-32 is not in the WHATWG Encoding Standard (TextDecoder has no decoder for it): these labels are ours. */
const UTF32_LABELS: ReadonlyMap<string, TextEncodingName> = new Map([
  ["utf-32", "utf-32le"],
  ["utf32", "utf-32le"],
  ["utf-32le", "utf-32le"],
  ["utf-32be", "utf-32be"],
]);

/** The byte order marks, longest first: FF FE 00 00 is UTF-32 LE, not UTF-16 LE followed by NUL. */
const BOMS: ReadonlyArray<readonly [readonly number[], TextEncodingName]> = [
  [[0xff, 0xfe, 0x00, 0x00], "utf-32le"],
  [[0x00, 0x00, 0xfe, 0xff], "utf-32be"],
  [[0xef, 0xbb, 0xbf], "utf-8"],
  [[0xff, 0xfe], "utf-16le"],
  [[0xfe, 0xff], "utf-16be"],
];

/** The encoding a byte order mark at the start of `head` names, if any. */
function bomEncoding(head: Uint8Array): TextEncodingName | undefined {
  return BOMS.find(([bom]) => bom.every((byte, index) => head[index] === byte))?.[1];
}

/**
 * The encoding a charset label names, or undefined when we do not know the label. Labels resolve as
 * browsers resolve them (TextDecoder): "latin1" and "iso-8859-1" are windows-1252, "utf-16" is LE.
 */
function encodingForLabel(label: string): TextEncodingName | undefined {
  const trimmed = label.trim().toLowerCase();
  const utf32 = UTF32_LABELS.get(trimmed);
  if (utf32 !== undefined) return utf32;
  try {
    const name = new TextDecoder(trimmed).encoding;
    // "replacement" decodes anything to one U+FFFD (it stands for encodings that are unsafe to read).
    return name === "replacement" ? undefined : name;
  } catch {
    return undefined;
  }
}

/** The charset parameter of a Content-Type ("text/csv; charset=UTF-16" -> "UTF-16"), or undefined. */
function contentTypeCharset(contentType: string): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  const value = match?.[1] ?? match?.[2];
  return value === undefined || value === "" ? undefined : value;
}

/** The charset a `<meta charset>` or `<meta http-equiv="Content-Type" content="...; charset=...">` in the first 1024 bytes names. */
function metaCharset(head: Uint8Array): string | undefined {
  const prefix = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, META_PRESCAN_BYTES)).toString("latin1");
  return /<meta\s[^>]*?charset\s*=\s*["']?\s*([a-z0-9_:.+-]+)/i.exec(prefix)?.[1];
}

/**
 * The encoding of a text file from its head, the part's Content-Type and whether it is HTML.
 * Returns undefined when the client declared a charset we do not know.
 */
export function textEncoding(head: Uint8Array, contentType: string, html: boolean): TextEncoding | undefined {
  const bom = bomEncoding(head);
  if (bom !== undefined) return { name: bom, source: "bom" };
  const declared = contentTypeCharset(contentType);
  if (declared !== undefined) {
    const name = encodingForLabel(declared);
    return name === undefined ? undefined : { name, source: "content-type" };
  }
  const meta = html ? metaCharset(head) : undefined;
  if (meta !== undefined) {
    const name = encodingForLabel(meta);
    if (name === undefined) return undefined;
    // A page whose bytes were read as ASCII to find its meta cannot be UTF-16 or UTF-32: browsers read it as UTF-8.
    return { name: /^utf-(16|32)/.test(name) ? "utf-8" : name, source: "meta" };
  }
  return { name: "utf-8", source: "default" };
}

/**
 * Decodes `bytes` in `encoding`, refusing invalid sequences (TypeError), without the byte order mark.
 * UTF-32 is decoded here: TextDecoder has no UTF-32, and a strict decoder is a few lines.
 */
export function decodeText(bytes: Uint8Array, encoding: TextEncodingName): string {
  if (encoding === "utf-32le" || encoding === "utf-32be") return new Utf32Decoder(encoding === "utf-32le").decode(bytes, false);
  return new TextDecoder(encoding, { fatal: true }).decode(bytes);
}

/**
 * A strict streaming UTF-32 decoder: every 4 bytes one code point up to U+10FFFF that is not a
 * surrogate; a leading byte order mark is dropped. Throws TypeError on anything else, as a fatal
 * TextDecoder does.
 */
export class Utf32Decoder {
  readonly #little: boolean;
  #pending = new Uint8Array(0);
  #started = false;

  constructor(little: boolean) {
    this.#little = little;
  }

  /** The text of `chunk` (with any bytes held from the previous chunk); `stream` false ends the input. */
  decode(chunk: Uint8Array, stream: boolean): string {
    const bytes = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const whole = bytes.length - (bytes.length % 4);
    if (!stream && whole !== bytes.length) throw new TypeError("UTF-32 text ends inside a character");
    const view = new DataView(bytes.buffer, bytes.byteOffset, whole);
    const parts: string[] = [];
    for (let at = 0; at < whole; at += 4) {
      const code = view.getUint32(at, this.#little);
      if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new TypeError(`invalid UTF-32 code point 0x${code.toString(16)}`);
      if (!this.#started && code === 0xfeff) {
        this.#started = true;
        continue;
      }
      this.#started = true;
      parts.push(String.fromCodePoint(code));
    }
    this.#pending = new Uint8Array(bytes.subarray(whole));
    return parts.join("");
  }
}

/** The most bytes chardet reads to decide: its statistics settle long before, and the cost stays bounded. */
const DETECTION_SAMPLE_BYTES = 64 * 1024;

/**
 * The legacy encoding (windows-1252, Shift_JIS, GB18030, KOI8-R, ...) that text which declares none
 * and is not UTF-8 is most likely in, as browsers guess it: chardet's statistical detectors over the
 * first DETECTION_SAMPLE_BYTES. Undefined when chardet has no answer TextDecoder can read, or names
 * a Unicode encoding (the bytes are not valid in it: that is why it is asked).
 */
export function detectLegacyEncoding(bytes: Uint8Array): TextEncoding | undefined {
  const label = chardet.detect(bytes.subarray(0, DETECTION_SAMPLE_BYTES));
  if (label === null || /^utf|^ucs/i.test(label)) return undefined;
  const name = encodingForLabel(label);
  return name === undefined ? undefined : { name, source: "detected" };
}
