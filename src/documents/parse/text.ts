import { isUtf8 } from "node:buffer";
import { decodeText, detectLegacyEncoding, type EncodingSource, META_PRESCAN_BYTES, textEncoding } from "../formats/encoding.ts";

/** The most text a parse step stores; the rest is cut and `truncated` is set. */
export const MAX_TEXT_BYTES = 1024 * 1024;

export interface BoundedText {
  text: string;
  truncated: boolean;
}

/**
 * `text` cut to at most `maxBytes` of UTF-8 on a character boundary. What PostgreSQL cannot store
 * (NUL, lone surrogates) is cleaned where every step output is written (src/data/db/storable.ts).
 */
export function boundText(text: string, maxBytes = MAX_TEXT_BYTES): BoundedText {
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text, "utf8") <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, "utf8");
  // A cut inside a multi-byte character decodes to U+FFFD at the end; drop it.
  return {
    text: bytes
      .subarray(0, maxBytes)
      .toString("utf8")
      .replace(/\uFFFD$/, ""),
    truncated: true,
  };
}

/** Decodes UTF-8, refusing invalid bytes (the upload checked them; a corrupt file says so here). */
export function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
}

export interface DecodedText {
  text: string;
  /** The encoding the bytes were read in, as the edge decided it (see textEncoding). */
  encoding: string;
  /** How it was decided. */
  encodingSource: EncodingSource;
}

/**
 * The text of a stored text-format file (txt, csv, json, html), decoded to a JavaScript string by
 * the same rules the edge used to accept it: byte order mark, the declared charset of `contentType`,
 * an HTML meta charset, else UTF-8, or the legacy encoding detected in bytes that are not UTF-8.
 * Invalid bytes throw (the upload checked them).
 */
export function decodeTextFile(bytes: Uint8Array, contentType: string, html: boolean): DecodedText {
  let encoding = textEncoding(bytes.subarray(0, META_PRESCAN_BYTES), contentType, html);
  if (encoding === undefined) throw new Error(`the declared charset of "${contentType}" is not one we know`);
  if (encoding.source === "default" && !isUtf8(bytes)) encoding = detectLegacyEncoding(bytes) ?? encoding;
  return { text: decodeText(bytes, encoding.name), encoding: encoding.name, encodingSource: encoding.source };
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** `text` with character references (`&#33;`, `&#x41;`) and the XML entities (plus `&nbsp;`) decoded; others are kept. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
}

export interface CsvShape {
  rows: number;
  columns: number;
}

/** Records and the field count of the first record of RFC 4180 CSV (quoted fields may hold commas and newlines). */
export function csvShape(text: string): CsvShape {
  let rows = 0;
  let columns = 0;
  let fields = 1;
  let quoted = false;
  let recordHasContent = false;
  const endRecord = () => {
    if (recordHasContent) {
      if (rows === 0) columns = fields;
      rows++;
    }
    fields = 1;
    recordHasContent = false;
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') i++;
      else if (char === '"') quoted = false;
      continue;
    }
    if (char === '"') quoted = true;
    else if (char === ",") fields++;
    else if (char === "\n") {
      endRecord();
      continue;
    } else if (char === "\r") continue;
    recordHasContent = true;
  }
  endRecord();
  return { rows, columns };
}
