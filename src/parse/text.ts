/** The most text a parse step stores; the rest is cut and `truncated` is set. */
export const MAX_TEXT_BYTES = 1024 * 1024;

export interface BoundedText {
  text: string;
  truncated: boolean;
}

/**
 * `text` cut to at most `maxBytes` of UTF-8 on a character boundary. NUL characters are removed:
 * PostgreSQL jsonb cannot hold them, and they carry nothing a reader wants.
 */
export function boundText(text: string, maxBytes = MAX_TEXT_BYTES): BoundedText {
  const clean = text.replaceAll("\u0000", "");
  const bytes = Buffer.from(clean, "utf8");
  if (bytes.length <= maxBytes) return { text: clean, truncated: false };
  // A cut inside a multi-byte character decodes to U+FFFD at the end; drop it.
  return { text: bytes.subarray(0, maxBytes).toString("utf8").replace(/\uFFFD$/, ""), truncated: true };
}

/** Decodes UTF-8, refusing invalid bytes (the upload checked them; a corrupt file says so here). */
export function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
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

/** The visible text of an HTML document: no scripts, styles or tags; common entities decoded. */
export function htmlToText(html: string): string {
  const withoutTags = html
    .replace(/<(script|style|template)\b[\s\S]*?<\/\1\s*>/gi, " ")
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<\/?(p|div|br|li|tr|h[1-6]|section|article|header|footer|table)\b[^>]*>/gi, "\n")
    .replace(/<[^>]*>/g, " ");
  return decodeEntities(withoutTags)
    .replace(/[ \t\r\f\v]+/g, " ")
    .replace(/ *\n[\s]*/g, "\n")
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
