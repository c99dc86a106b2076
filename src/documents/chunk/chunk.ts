import { type Element, FURNITURE } from "../parse/elements/element.ts";
import { appendAll } from "../../platform/arrays.ts";

/** Where chunks are cut: at each Title and by size (a chunk never spans two sections), or by size alone. */
type ChunkStrategy = "by_title" | "by_size";

export interface ChunkOptions {
  strategy: ChunkStrategy;
  /** No chunk is longer (in UTF-16 code units, as JavaScript counts characters). */
  maxCharacters: number;
  /** Characters of a split element's end repeated at the start of its next piece; at most half of maxCharacters. */
  overlapCharacters: number;
}

/** One chunk: its text, the pages its elements are on, and how many elements (or pieces of them) it holds. */
export interface Chunk {
  text: string;
  pages: number[];
  elementCount: number;
}

/** One element, or a piece of one, ready to be packed. */
interface Piece {
  text: string;
  page?: number | undefined;
  /** A table's rows are never put in a chunk with other elements' text. */
  table: boolean;
  /** A Title: by title, it starts a section. */
  title: boolean;
}

const SEPARATOR = "\n\n";

/**
 * Chunks for retrieval, as Unstructured's `chunk_by_title` and `basic` strategies document them:
 * elements are packed in order into chunks of at most `maxCharacters`, joined by a blank line;
 * by title, a Title closes the chunk before it, so a chunk never spans two sections. An element
 * longer than the limit is split at whitespace (each next piece starts with the overlap); a table
 * has chunks of its own, split between rows, never inside one (a single row longer than the limit
 * is split as text). Running headers, footers and page numbers are left out.
 */
export function chunkElements(elements: readonly Element[], options: ChunkOptions): Chunk[] {
  const max = Math.max(1, options.maxCharacters);
  // At most half a chunk: each piece then moves on by half the limit, so pieces stay linear in the text.
  const overlap = Math.min(Math.max(0, options.overlapCharacters), Math.floor(max / 2));
  const chunks: Chunk[] = [];
  let open: { texts: string[]; length: number; pages: Set<number>; table: boolean } | undefined;
  const close = () => {
    if (open !== undefined && open.texts.length > 0) {
      chunks.push({ text: open.texts.join(SEPARATOR), pages: [...open.pages].sort((a, b) => a - b), elementCount: open.texts.length });
    }
    open = undefined;
  };
  for (const element of elements) {
    if (FURNITURE.has(element.type) || element.text.trim() === "") continue;
    for (const piece of pieces(element, max, overlap)) {
      const startsSection = piece.title && options.strategy === "by_title";
      const fits = open !== undefined && open.length + SEPARATOR.length + piece.text.length <= max && open.table === piece.table;
      if (startsSection || !fits) close();
      open ??= { texts: [], length: -SEPARATOR.length, pages: new Set(), table: piece.table };
      open.texts.push(piece.text);
      open.length += SEPARATOR.length + piece.text.length;
      if (piece.page !== undefined) open.pages.add(piece.page);
    }
  }
  close();
  return chunks;
}

/** An element as pieces of at most `max` characters: a table by rows, other text at whitespace. */
function pieces(element: Element, max: number, overlap: number): Piece[] {
  const base = { page: element.page, table: element.type === "Table", title: element.type === "Title" };
  if (element.text.length <= max) return [{ ...base, text: element.text }];
  if (element.type !== "Table") return splitText(element.text, max, overlap).map((text, index) => ({ ...base, title: base.title && index === 0, text }));
  const rows = element.table?.rows.map((row) => row.join("\t")) ?? element.text.split("\n");
  const found: Piece[] = [];
  let current = "";
  for (const row of rows) {
    if (current !== "" && current.length + 1 + row.length <= max) {
      current += `\n${row}`;
      continue;
    }
    if (current !== "") found.push({ ...base, text: current });
    current = "";
    if (row.length <= max) current = row;
    else
      appendAll(
        found,
        splitText(row, max, 0).map((text) => ({ ...base, text })),
      );
  }
  if (current !== "") found.push({ ...base, text: current });
  return found;
}

/** `index`, or the start of the surrogate pair it falls inside: a cut there would leave half a character on each side. */
function characterStart(text: string, index: number): number {
  const code = text.charCodeAt(index);
  const before = text.charCodeAt(index - 1);
  return code >= 0xdc00 && code <= 0xdfff && before >= 0xd800 && before <= 0xdbff ? index - 1 : index;
}

/** `text` cut into pieces of at most `max` characters, at the last whitespace that fits (or hard), each after the first starting with the `overlap` before it. */
function splitText(text: string, max: number, overlap: number): string[] {
  const found: string[] = [];
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= max) {
      found.push(text.slice(start));
      break;
    }
    const window = text.slice(start, start + max);
    const space = window.search(/\s\S*$/);
    let end = space > max / 2 ? start + space : characterStart(text, start + max);
    // A limit of one code unit cannot hold a surrogate pair: the pair goes whole.
    if (end <= start) end = start + 2;
    found.push(text.slice(start, end));
    const next = text.slice(end).search(/\S/);
    const resume = next === -1 ? text.length : end + next;
    const previous = start;
    start = characterStart(text, Math.max(resume - overlap, start + 1));
    if (start <= previous) start = previous + 2; // past a pair that starts the piece
  }
  return found.map((piece) => piece.trim()).filter((piece) => piece !== "");
}
