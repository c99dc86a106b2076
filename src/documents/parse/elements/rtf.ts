import type { Element } from "./element.ts";
import { classifyText } from "./plain-text.ts";

/** Deeper than any real document nests its groups; past it the file is hostile. */
const MAX_RTF_DEPTH = 512;

/** Destinations that are not the document's text: tables of fonts, colours and styles, metadata, pictures, embedded objects, field instructions. */
const SKIPPED_DESTINATIONS = new Set([
  "fonttbl",
  "colortbl",
  "stylesheet",
  "info",
  "pict",
  "object",
  "fldinst",
  "listtable",
  "listoverridetable",
  "rsidtbl",
  "generator",
  "xmlnstbl",
  "themedata",
  "colorschememapping",
  "datastore",
  "latentstyles",
  "header",
  "footer",
  "headerl",
  "headerr",
  "footerl",
  "footerr",
]);

/** An RTF document's text (paragraphs separated by a blank line) and its elements. */
export interface RichTextDocument {
  text: string;
  elements: Element[];
}

interface Group {
  skip: boolean;
  /** Characters to skip after a \u escape (its ANSI fallback). */
  unicodeSkip: number;
}

/**
 * A small reader of RTF's text, written here because no kept library reads RTF to text in
 * JavaScript without a DOM: groups, control words and symbols, `\par` and `\line`, `\tab`, `\'hh`
 * in the document's ANSI code page (`\ansicpg`, windows-1252 by default), `\uN` with its fallback
 * skipped (`\ucN`), and the destinations that are not text (font and colour tables, styles,
 * metadata, pictures, objects, field instructions, headers and footers, any `\*` destination)
 * skipped. Nesting is bounded, so a hostile file cannot exhaust the stack or the time.
 */
export function readRichText(bytes: Uint8Array): RichTextDocument {
  const source = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  if (!source.startsWith("{\\rtf")) throw new Error("it does not start with {\\rtf");
  let codePage = new TextDecoder("windows-1252");
  const stack: Group[] = [];
  let group: Group = { skip: false, unicodeSkip: 1 };
  let pendingSkip = 0;
  let paragraph = "";
  /** Bytes of consecutive \'hh escapes, decoded together (a multi-byte code page's character spans two). */
  let ansi: number[] = [];
  const paragraphs: string[] = [];
  const flushAnsi = () => {
    if (ansi.length > 0) paragraph += codePage.decode(Uint8Array.from(ansi));
    ansi = [];
  };
  const emit = (text: string) => {
    flushAnsi();
    if (group.skip) return;
    if (pendingSkip > 0) {
      const skipped = Math.min(pendingSkip, text.length);
      pendingSkip -= skipped;
      text = text.slice(skipped);
    }
    paragraph += text;
  };
  const endParagraph = () => {
    flushAnsi();
    if (paragraph.trim() !== "") paragraphs.push(paragraph.trim());
    paragraph = "";
  };

  for (let index = 0; index < source.length; ) {
    const character = source[index]!;
    if (character === "{") {
      flushAnsi();
      if (stack.length >= MAX_RTF_DEPTH) throw new Error(`its groups nest deeper than ${MAX_RTF_DEPTH}`);
      stack.push(group);
      group = { ...group };
      index++;
    } else if (character === "}") {
      flushAnsi();
      group = stack.pop() ?? group;
      index++;
    } else if (character === "\\") {
      const word = /^\\([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(source.slice(index, index + 48));
      if (word !== null) {
        index += word[0].length;
        const [, name = "", digits] = word;
        const parameter = digits === undefined ? undefined : Number(digits);
        if (name !== "u") flushAnsi();
        if (SKIPPED_DESTINATIONS.has(name)) group.skip = true;
        else if (name === "ansicpg" && parameter !== undefined) {
          try {
            codePage = new TextDecoder(`windows-${parameter}`);
          } catch {
            // a code page TextDecoder does not know: stay with windows-1252
          }
        } else if (name === "uc" && parameter !== undefined) group.unicodeSkip = Math.max(0, parameter);
        else if (name === "u" && parameter !== undefined) {
          flushAnsi();
          emit(String.fromCharCode(parameter < 0 ? parameter + 65536 : parameter));
          pendingSkip = group.unicodeSkip;
        } else if (name === "par" || name === "sect" || name === "page") {
          if (!group.skip) endParagraph();
        } else if (name === "line") emit("\n");
        else if (name === "tab") emit("\t");
        continue;
      }
      const symbol = source[index + 1];
      if (symbol === "'") {
        const hex = source.slice(index + 2, index + 4);
        index += 4;
        if (group.skip) continue;
        if (pendingSkip > 0) {
          pendingSkip--;
          continue;
        }
        if (/^[0-9a-fA-F]{2}$/.test(hex)) ansi.push(Number.parseInt(hex, 16));
        continue;
      }
      index += 2;
      if (symbol === "*") group.skip = true;
      else if (symbol === "~") emit("\u00a0");
      else if (symbol === "\\" || symbol === "{" || symbol === "}") emit(symbol);
      else if (symbol === "\n" || symbol === "\r") {
        if (!group.skip) endParagraph();
      }
    } else if (character === "\r" || character === "\n") {
      index++;
    } else {
      const end = source.slice(index).search(/[\\{}\r\n]/);
      const run = end === -1 ? source.slice(index) : source.slice(index, index + end);
      emit(run);
      index += run.length;
    }
  }
  endParagraph();
  return { text: paragraphs.join("\n\n"), elements: paragraphs.map((text) => classifyText(text, !text.includes("\n"))) };
}
