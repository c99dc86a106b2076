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
 * (NUL, lone surrogates) is cleaned where every step output is written (src/db/storable.ts).
 */
export function boundText(text: string, maxBytes = MAX_TEXT_BYTES): BoundedText {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { text, truncated: false };
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

const HIDDEN_ELEMENTS = new Set(["script", "style", "template"]);
const BLOCK_ELEMENTS = new Set(["p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "header", "footer", "table"]);
const TAG_NAME = /^\/?([a-z][a-z0-9-]*)/i;

/**
 * The visible text of an HTML document: no scripts, styles, comments or tags; block elements break
 * lines; common entities decoded. One pass with indexOf, so hostile input (thousands of unclosed
 * tags) costs linear time, unlike regular expressions with lazy quantifiers.
 */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf("<", at);
    if (open === -1) {
      parts.push(html.slice(at));
      break;
    }
    parts.push(html.slice(at, open));
    if (html.startsWith("<!--", open)) {
      const end = html.indexOf("-->", open + 4);
      parts.push(" ");
      at = end === -1 ? html.length : end + 3;
      continue;
    }
    const close = html.indexOf(">", open + 1);
    if (close === -1) break; // an unclosed tag runs to the end: nothing after it is text
    const tag = html.slice(open + 1, close);
    const name = TAG_NAME.exec(tag)?.[1]?.toLowerCase() ?? "";
    at = close + 1;
    if (HIDDEN_ELEMENTS.has(name) && !tag.startsWith("/")) {
      // Case-insensitive search for the closing tag, moving forward only.
      const closer = new RegExp(`</${name}\\s*>`, "gi");
      closer.lastIndex = at;
      const match = closer.exec(html);
      at = match === null ? html.length : match.index + match[0].length;
      parts.push(" ");
      continue;
    }
    parts.push(BLOCK_ELEMENTS.has(name) ? "\n" : " ");
  }
  return decodeEntities(parts.join(""))
    .replace(/[ \t\r\f\v]+/g, " ")
    .replace(/ *\n\s*/g, "\n")
    .trim();
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
