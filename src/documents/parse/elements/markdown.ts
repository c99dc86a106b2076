import { type Element, FURNITURE } from "./element.ts";

/**
 * The elements as CommonMark with GFM tables: `#` per heading level, `- ` list items, pipe tables,
 * fenced code. Page furniture (running headers, footers, page numbers) is left out, as Docling does.
 */
export function elementsToMarkdown(elements: readonly Element[]): string {
  const blocks: string[] = [];
  let list: string[] = [];
  const endList = () => {
    if (list.length > 0) blocks.push(list.join("\n"));
    list = [];
  };
  for (const element of elements) {
    if (FURNITURE.has(element.type) || element.text.trim() === "") continue;
    if (element.type === "ListItem") {
      list.push(`- ${inline(element.text)}`);
      continue;
    }
    endList();
    blocks.push(block(element));
  }
  endList();
  return blocks.join("\n\n");
}

function block(element: Element): string {
  switch (element.type) {
    case "Title":
      return `${"#".repeat(element.level ?? 1)} ${inline(element.text)}`;
    case "Table":
      return element.table === undefined ? escapeMarkdown(element.text) : pipeTable(element.table.rows);
    case "CodeSnippet":
      return `\`\`\`\n${element.text.replace(/```/g, "` ``")}\n\`\`\``;
    default:
      return escapeMarkdown(element.text);
  }
}

/** A GFM pipe table: the first row is its header. */
function pipeTable(rows: readonly (readonly string[])[]): string {
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 1);
  const line = (row: readonly string[]) => {
    let text = "|";
    for (let index = 0; index < width; index++) text += ` ${cell(row[index] ?? "")} |`;
    return text;
  };
  const [header = [], ...body] = rows;
  return [line(header), `|${" --- |".repeat(width)}`, ...body.map(line)].join("\n");
}

function cell(text: string): string {
  const line = inline(text);
  return line.includes("|") ? line.replace(/\|/g, "\\|") : line;
}

/** One line of text: newlines inside a heading, list item or cell become spaces. */
function inline(text: string): string {
  return escapeMarkdown(text.includes("\n") ? oneLine(text) : text.trim());
}

/** The lines of `text`, trimmed, blank ones dropped, joined by spaces (split, not a regular expression: `\s*\n\s*` rescans a long run of spaces from each of its positions). */
function oneLine(text: string): string {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .join(" ");
}

/** What starts a new line for the `m` flag's `^`. */
const LINE_BREAK = /[\n\r\u2028\u2029]/;
/** What the block-syntax replacements in escapeMarkdown change at the start of one line: `# `, `>`, `- `, `+ `, `1. `, `1) `. */
const STARTS_WITH_SYNTAX = /^[ \t]*(?:[#>]|[-+](?=\s)|\d+[.)]\s)/;

/**
 * The characters that start inline syntax: escapes, raw HTML and autolinks (`<`), emphasis (`*`,
 * `_`), code spans and links (`[`). Escaped wherever they are, each is shown as written.
 */
const INLINE_SYNTAX = /[\\<*_`[]/g;

/** INLINE_SYNTAX as a test: most text has none of its characters, and a test costs a sixth of a replacement. */
const HAS_INLINE_SYNTAX = /[\\<*_`[]/;

/** INLINE_SYNTAX or LINE_BREAK, in one test: what a line of prose that starts with a letter needs escaped. */
const HAS_INLINE_SYNTAX_OR_LINE_BREAK = /[\\<*_`[\n\r\u2028\u2029]/;

/**
 * Keeps text that looks like Markdown syntax from being read as it: inline syntax (`<form>`,
 * `*_x_*`, `` `x` ``, `[x](y)`) anywhere, and block syntax at a line's start (`# `, `- `, `1. `, `>`).
 */
function escapeMarkdown(text: string): string {
  // Most blocks are one line of prose that starts with an ASCII letter (not syntax): one test says so.
  const first = text.charCodeAt(0) | 0x20;
  if (first >= 0x61 && first <= 0x7a && !HAS_INLINE_SYNTAX_OR_LINE_BREAK.test(text)) return text;
  const escaped = HAS_INLINE_SYNTAX.test(text) ? text.replace(INLINE_SYNTAX, "\\$&") : text;
  // One line goes through the replacements only if its start is syntax (a table's numbers are not: `1.5`, `3`).
  if (!LINE_BREAK.test(escaped) && !STARTS_WITH_SYNTAX.test(escaped)) return escaped;
  // Indentation is spaces and tabs: `\s*` would run on over the next lines from each line's start.
  // A `*` is escaped already, and so no longer at the line's start.
  return escaped.replace(/^([ \t]*)([#>]|[-+](?=\s))/gm, "$1\\$2").replace(/^([ \t]*\d+)([.)]\s)/gm, "$1\\$2");
}
