import { Lexer, type Token, type Tokens } from "marked";
import { decodeHTML } from "entities";
import { type Element, headingLevel } from "./element.ts";
import { htmlElements } from "./html.ts";
import { plainTextElements } from "./plain-text.ts";
import { TableBudget } from "./table.ts";
import { appendAll } from "../../../platform/arrays.ts";

/**
 * The most table cells a document's delimiter rows may make: marked pads every row of a table to its
 * header's width, so a header of n columns over n one-cell rows made n² cells (4,000 columns, 28 KB,
 * ran out of a 3 GB heap). Each cell costs at least `<td></td>` of the output's megabyte, so more
 * could not be kept anyway; the document is read as plain text instead.
 */
const MAX_TABLE_CELLS = 120_000;
/**
 * The deepest nesting of blockquotes and lists: marked lexes a container's content again at each
 * level, recursively (2,500 `>` overflowed the stack; 800 lines of a list indented 2 more each took
 * 3.8 s). Past it the document is read as plain text.
 */
const MAX_NESTING = 100;
/**
 * The emphasis work the inline text of a document may cost, counted as each block's `*`, `_` and `~`
 * times its length: marked looks for each opening delimiter's closer up to the block's end, so
 * `"a_".repeat(40_000)` took 6.5 s. A block past what is left of it keeps its text as written.
 */
const MAX_EMPHASIS_WORK = 250_000_000;

/**
 * The elements of a Markdown document, from marked's lexer (CommonMark and GFM): no hand-written
 * Markdown parser. Text marked would take quadratic time or stack over (see the limits above) is
 * read as plain text instead of failing the parse or spending its time budget.
 */
export function markdownElements(markdown: string): Element[] {
  if (tableCells(markdown) > MAX_TABLE_CELLS || nesting(markdown) > MAX_NESTING) return plainTextElements(markdown);
  let tokens: Token[];
  try {
    tokens = lex(markdown);
  } catch (error) {
    // A recursion the checks above do not foresee: the document's text is still worth reading.
    if (error instanceof RangeError) return plainTextElements(markdown);
    throw error;
  }
  const elements: Element[] = [];
  // Its HTML blocks' tables share one budget, as one document's.
  blockElements(tokens, elements, new TableBudget());
  return elements;
}

/**
 * What `Lexer.lex` does (marked 18: block tokens, then each queued block's inline tokens), except
 * that a block whose emphasis would cost more than the work left is one text token. It follows
 * `lex`'s steps through marked's public members, so package.json pins marked's exact version: a
 * release that changes them is taken on purpose, with this function.
 */
function lex(markdown: string): Token[] {
  const lexer = new Lexer({ gfm: true });
  lexer.blockTokens(markdown.replace(/\r\n|\r/g, "\n"), lexer.tokens);
  let work = MAX_EMPHASIS_WORK;
  for (const { src, tokens } of lexer.inlineQueue) {
    lexer.state.inRawBlock = false;
    const cost = emphasisDelimiters(src) * src.length;
    if (cost > work) {
      tokens.push({ type: "text", raw: src, text: src });
      continue;
    }
    work -= cost;
    lexer.inlineTokens(src, tokens);
  }
  lexer.inlineQueue = [];
  return lexer.tokens;
}

/** How many characters of `text` may open or close emphasis or a strikethrough. */
function emphasisDelimiters(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x2a || code === 0x5f || code === 0x7e) count++;
  }
  return count;
}

/** A line holding only a GFM table's delimiter row characters, and container markers before it (one class, so it cannot backtrack). */
const DELIMITER_ROW = /^[ \t>*+.)0-9:|-]*$/;

/** A line that starts a block other than a paragraph or a table row (a heading, a fence, a quote, a list item, HTML): a table ends before it. */
const BLOCK_START = /^ {0,3}(?:#{1,6}(?:[ \t]|$)|`{3}|~{3}|>|<|[-+*][ \t]|\d{1,9}[.)][ \t])/;
/** A code fence's opening or closing line. */
const FENCE = /^ {0,3}(`{3}|~{3})/;

/**
 * At least the number of cells marked makes of the document's tables: for each line that may be a
 * delimiter row (outside code fences), its cells times the lines from the one before it (the
 * header) to the next blank line or line that starts another block, where a table ends. Linear:
 * one pass marks the fenced lines, one pass back finds each line's end of table.
 */
function tableCells(markdown: string): number {
  const lines = markdown.split(/\r\n|\r|\n/);
  const fenced = fencedLines(lines);
  let cells = 0;
  let end = lines.length;
  for (let at = lines.length - 1; at >= 0; at--) {
    const line = lines[at]!;
    if (line.trim() === "" || fenced[at] || BLOCK_START.test(line)) {
      end = at;
      continue;
    }
    if (!line.includes("-") || !line.includes("|") || !DELIMITER_ROW.test(line)) continue;
    const row = line.trim();
    let pipes = 0;
    for (let i = row.indexOf("|"); i !== -1; i = row.indexOf("|", i + 1)) pipes++;
    // Pipes between cells: a leading and a trailing one are optional.
    const columns = pipes + 1 - (row.startsWith("|") ? 1 : 0) - (row.endsWith("|") ? 1 : 0);
    cells += Math.max(1, columns) * (end - at + 1);
  }
  return cells;
}

/** Which lines are code fences or inside one (a fence closes with the same character it opened with). */
function fencedLines(lines: readonly string[]): boolean[] {
  const fenced: boolean[] = [];
  let open: string | undefined;
  for (const line of lines) {
    const fence = FENCE.exec(line)?.[1]?.[0];
    if (open === undefined && fence !== undefined) open = fence;
    else if (open !== undefined && fence === open) {
      fenced.push(true);
      open = undefined;
      continue;
    }
    fenced.push(open !== undefined);
  }
  return fenced;
}

/**
 * At least the deepest nesting of blockquotes and lists on any line: the container markers (`>`, a
 * bullet or an enumerator) starting it, and a level for each two columns of indentation before a
 * marker (a nested list item is indented past its parent's marker).
 */
function nesting(markdown: string): number {
  let deepest = 0;
  let depth = 0;
  let columns = 0;
  let lineStart = true;
  for (let at = 0; at < markdown.length; at++) {
    const char = markdown[at]!;
    if (char === "\n" || char === "\r") {
      [depth, columns, lineStart] = [0, 0, true];
      continue;
    }
    if (!lineStart) continue;
    if (char === " " || char === "\t") {
      columns += char === "\t" ? 4 : 1;
      continue;
    }
    const marker = containerMarker(markdown, at);
    if (marker === 0) {
      lineStart = false;
      continue;
    }
    depth += 1 + Math.floor(columns / 2);
    columns = 0;
    deepest = Math.max(deepest, depth);
    at += marker - 1;
  }
  return deepest;
}

/** The length of a container marker at `at`: `>`, or a bullet or an enumerator followed by a space or the line's end; 0 when none. */
function containerMarker(text: string, at: number): number {
  const char = text[at]!;
  if (char === ">") return 1;
  let end = at;
  if (char === "-" || char === "+" || char === "*") end = at + 1;
  else {
    while (end < text.length && end - at < 9 && text.charCodeAt(end) >= 0x30 && text.charCodeAt(end) <= 0x39) end++;
    if (end === at || (text[end] !== "." && text[end] !== ")")) return 0;
    end++;
  }
  const next = text[end];
  return next === undefined || next === " " || next === "\t" || next === "\n" || next === "\r" ? end - at : 0;
}

function blockElements(tokens: readonly Token[], elements: Element[], tables: TableBudget): void {
  for (const token of tokens) {
    switch (token.type) {
      case "heading":
        push(elements, { type: "Title", text: inlineText(token.tokens), level: headingLevel((token as Tokens.Heading).depth) });
        break;
      case "paragraph":
      case "text":
        push(elements, { type: "NarrativeText", text: inlineText((token as Tokens.Paragraph | Tokens.Text).tokens ?? [token]) });
        break;
      case "list":
        for (const item of (token as Tokens.List).items) {
          const nested = item.tokens.filter((child) => child.type === "list");
          const own = item.tokens.filter((child) => child.type !== "list");
          push(elements, {
            type: "ListItem",
            text: own.map((child) => inlineText("tokens" in child && child.tokens !== undefined ? child.tokens : [child])).join("\n"),
          });
          blockElements(nested, elements, tables);
        }
        break;
      case "table": {
        const table = token as Tokens.Table;
        const rows = [table.header.map((cell) => inlineText(cell.tokens)), ...table.rows.map((row) => row.map((cell) => inlineText(cell.tokens)))];
        const element = tables.table(rows);
        if (element !== undefined) elements.push(element);
        break;
      }
      case "code":
        push(elements, { type: "CodeSnippet", text: (token as Tokens.Code).text });
        break;
      case "blockquote":
        blockElements((token as Tokens.Blockquote).tokens, elements, tables);
        break;
      case "html":
        appendAll(elements, htmlElements((token as Tokens.HTML).text, tables));
        break;
    }
  }
}

function push(elements: Element[], element: Element): void {
  const text = element.text.trim();
  if (text !== "") elements.push({ ...element, text });
}

/** The plain text of inline tokens: emphasis, links and code spans reduced to their text, entities decoded. */
function inlineText(tokens: readonly Token[] | undefined): string {
  if (tokens === undefined) return "";
  return tokens
    .map((token) => {
      if (token.type === "br") return "\n";
      if (token.type === "image") return (token as Tokens.Image).text;
      if ("tokens" in token && Array.isArray(token.tokens) && token.tokens.length > 0) return inlineText(token.tokens);
      if (token.type === "html") return "";
      return decodeHTML("text" in token && typeof token.text === "string" ? token.text : "");
    })
    .join("");
}
