import { decodeXML } from "entities";
import { endsName, readDeclaration, startsDeclaration, type TagAttributes, tagAttributes, tagEnd } from "./markup.ts";

/** What scanWord reports, in document order. */
export interface WordHandler {
  onopentag(name: string, attributes: TagAttributes): void;
  onclosetag(name: string): void;
  /** The text of a `<w:t>` run (character references decoded); a run may come in several pieces. */
  ontext(text: string): void;
}

const LT = 0x3c;
const SLASH = 0x2f;
const TEXT = "w:t";
const FALLBACK = "mc:Fallback";

/** Slots of a WordTags table: a power of two, far more than the names a reader asks for. */
const SLOTS = 1024;

/** One step of the hash a tag's name is looked up by, taken over its characters as they are read. */
function hashStep(hash: number, code: number): number {
  return (hash * 31 + code) & (SLOTS - 1);
}

/**
 * The tag names a reader acts on, looked up by a hash of their characters: scanWord hashes a name
 * as it finds its end and compares it in place, so a tag it skips costs no string and no lookup.
 */
export class WordTags {
  readonly #slots: (string | undefined)[] = new Array<string | undefined>(SLOTS).fill(undefined);
  /** Whether `<w:t>` tags are reported (their text always is). */
  readonly runs: boolean;

  constructor(names: readonly string[]) {
    this.runs = names.includes(TEXT);
    for (const name of new Set([...names, TEXT, FALLBACK])) {
      let hash = 0;
      for (let at = 0; at < name.length; at++) hash = hashStep(hash, name.charCodeAt(at));
      // Names that share a slot take the next free one; find looks on until an empty slot.
      while (this.#slots[hash] !== undefined) hash = (hash + 1) & (SLOTS - 1);
      this.#slots[hash] = name;
    }
  }

  /** The name written in `markup` from `start` to `end` (whose hash is `hash`), if it is one of these. */
  find(markup: string, start: number, end: number, hash: number): string | undefined {
    for (let slot = hash; ; slot = (slot + 1) & (SLOTS - 1)) {
      const name = this.#slots[slot];
      if (name === undefined) return undefined;
      if (sameName(markup, start, end, name)) return name;
    }
  }
}

/** Whether `markup` holds `name` from `start` to `end`. */
function sameName(markup: string, start: number, end: number, name: string): boolean {
  if (name.length !== end - start) return false;
  for (let at = 0; at < name.length; at++) if (markup.charCodeAt(start + at) !== name.charCodeAt(at)) return false;
  return true;
}

/**
 * Reads a WordprocessingML part once, reporting only the tags in `wanted` and the text of `<w:t>`
 * runs (their tags too when `wanted` holds `w:t`). What an `mc:Fallback` holds, in any part (the
 * copy of a text box kept for older readers), is skipped. Written for Word instead of calling
 * scanMarkup: most of a Word part's tags (runs, run properties, bookmarks, proofing marks) say
 * nothing about structure, and this passes over them with no string and no call per tag. Tags end
 * as scanMarkup ends them (a quoted value may hold `>`); comments, CDATA (text inside a run) and
 * processing instructions are read as in XML; a `<` that starts no tag is text. There is no nesting
 * to limit: it keeps no stack. Linear in the part's length on any input.
 */
export function scanWord(xml: string, wanted: WordTags, handler: WordHandler): void {
  const length = xml.length;
  let inText = false;
  let fallbackDepth = 0;
  const text = (piece: string, literal = false) => {
    if (fallbackDepth === 0 && piece !== "") handler.ontext(literal || !piece.includes("&") ? piece : decodeXML(piece));
  };
  let at = 0;
  while (at < length) {
    // Word writes its tags one after another: most begin where the last one ended.
    const lt = xml.charCodeAt(at) === LT ? at : xml.indexOf("<", at);
    if (lt === -1) {
      if (inText) text(xml.slice(at));
      break;
    }
    if (inText && lt > at) text(xml.slice(at, lt));
    const next = xml.charCodeAt(lt + 1);
    if (startsDeclaration(next)) {
      const declaration = readDeclaration(xml, lt, true);
      if (inText && declaration.cdata !== undefined) text(xml.slice(...declaration.cdata), true);
      at = declaration.end;
      continue;
    }
    const closing = next === SLASH;
    const nameStart = closing ? lt + 2 : lt + 1;
    let nameEnd = nameStart;
    let hash = 0;
    for (let code = xml.charCodeAt(nameEnd); nameEnd < length && !endsName(code); code = xml.charCodeAt(++nameEnd)) hash = hashStep(hash, code);
    if (nameEnd === nameStart) {
      // "<" that starts no tag is text (as scanMarkup reads it).
      if (inText) text("<");
      at = lt + 1;
      continue;
    }
    const gt = tagEnd(xml, nameEnd);
    if (gt === length) break; // a tag left open at the end: nothing after its "<" is text
    at = gt + 1;
    const name = wanted.find(xml, nameStart, nameEnd, hash);
    if (name === undefined) continue;
    const selfClosing = !closing && xml.charCodeAt(gt - 1) === SLASH;
    if (name === FALLBACK) {
      if (closing) fallbackDepth = Math.max(0, fallbackDepth - 1);
      else if (!selfClosing) fallbackDepth++;
      continue;
    }
    if (fallbackDepth > 0) continue;
    if (name === TEXT) {
      inText = !closing && !selfClosing;
      if (!wanted.runs) continue;
    }
    if (closing) {
      handler.onclosetag(name);
      continue;
    }
    handler.onopentag(name, tagAttributes(xml.slice(nameEnd, selfClosing ? gt - 1 : gt), false));
    if (selfClosing) handler.onclosetag(name);
  }
}
