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

/** Characters a WordTags automaton has a column for; any other ends its hope of a wanted name. */
const ASCII = 128;
/** The automaton's answer for a character that ends a name (as endsName says): the name is whole. */
const NAME_ENDS = -2;
/** Its answer for a character no wanted name has there: the tag is skipped. */
const NOT_WANTED = -1;

/**
 * The tag names a reader acts on, as an automaton over their characters (a trie in a table):
 * scanWord takes one step per character of a name as it reads it, and knows at the name's end
 * which wanted name it is, if any; past the first character no wanted name has there, the rest of
 * the name is only read to its end. A tag it skips costs no string, no hash and no comparison.
 */
export class WordTags {
  /** From a state and a character (ASCII) to the next state, NOT_WANTED or NAME_ENDS; state 0 is the start. */
  readonly steps: Int16Array;
  /** The wanted name read when a name ends in each state (undefined for a prefix only). */
  readonly names: (string | undefined)[] = [undefined];
  /** Whether `<w:t>` tags are reported (their text always is). */
  readonly runs: boolean;

  constructor(wanted: readonly string[]) {
    this.runs = wanted.includes(TEXT);
    const all = [...new Set([...wanted, TEXT, FALLBACK])];
    const states = 1 + all.reduce((sum, name) => sum + name.length, 0);
    this.steps = new Int16Array(states * ASCII).fill(NOT_WANTED);
    let used = 1;
    for (const name of all) {
      if (!/^[\x21-\x7e]+$/.test(name)) throw new Error(`a wanted tag name is printable ASCII: ${JSON.stringify(name)}`);
      let state = 0;
      for (let at = 0; at < name.length; at++) {
        const cell = state * ASCII + name.charCodeAt(at);
        if (this.steps[cell] === NOT_WANTED) this.steps[cell] = used++;
        state = this.steps[cell]!;
      }
      this.names[state] = name;
    }
    this.names.length = used;
    for (let state = 0; state < used; state++) {
      for (let code = 0; code < ASCII; code++) if (endsName(code)) this.steps[state * ASCII + code] = NAME_ENDS;
    }
  }
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
  const { steps, names } = wanted;
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
    // One step of the automaton per character, to the name's end or to the first one no wanted name has.
    let nameEnd = nameStart;
    let state = 0;
    for (; nameEnd < length; nameEnd++) {
      const code = xml.charCodeAt(nameEnd);
      const step = code < ASCII ? steps[state * ASCII + code]! : NOT_WANTED;
      if (step === NAME_ENDS) break;
      state = step;
      if (step === NOT_WANTED) {
        // Not wanted: the rest of the name is read as it is, for tagEnd to start after it.
        while (nameEnd < length && !endsName(xml.charCodeAt(nameEnd))) nameEnd++;
        break;
      }
    }
    if (nameEnd === nameStart) {
      // "<" that starts no tag is text (as scanMarkup reads it).
      if (inText) text("<");
      at = lt + 1;
      continue;
    }
    const gt = tagEnd(xml, nameEnd);
    if (gt === length) break; // a tag left open at the end: nothing after its "<" is text
    at = gt + 1;
    const name = state === NOT_WANTED ? undefined : names[state];
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
