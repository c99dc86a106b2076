import { type Element, type ElementType, headingLevel } from "./element.ts";
import { MarkupTooDeepError, scanMarkup, type TagAttributes } from "./markup.ts";
import { classifyText, plainTextElements } from "./plain-text.ts";
import { MAX_SPANNED_CELLS, TableBudget } from "./table.ts";

const HIDDEN = new Set(["script", "style", "template", "noscript"]);
/** Elements whose text is one element of the given type. */
const BLOCK_TYPES: ReadonlyMap<string, ElementType | "classify"> = new Map([
  ["h1", "Title"],
  ["h2", "Title"],
  ["h3", "Title"],
  ["h4", "Title"],
  ["h5", "Title"],
  ["h6", "Title"],
  ["p", "NarrativeText"],
  ["li", "ListItem"],
  ["dt", "ListItem"],
  ["pre", "CodeSnippet"],
  ["address", "Address"],
  ["figcaption", "FigureCaption"],
  ["caption", "FigureCaption"],
  ["blockquote", "classify"],
  ["div", "classify"],
  ["dd", "classify"],
  ["section", "classify"],
  ["article", "classify"],
  ["main", "classify"],
  ["body", "classify"],
  ["ul", "classify"],
  ["ol", "classify"],
  ["dl", "classify"],
  ["nav", "classify"],
  ["aside", "classify"],
  ["figure", "classify"],
  ["form", "classify"],
]);
/** Page furniture: a `<header>` or `<footer>` that is not inside an article or section (those head their own content). */
const FURNITURE: ReadonlyMap<string, ElementType> = new Map([
  ["header", "Header"],
  ["footer", "Footer"],
]);
const SECTIONING = new Set(["article", "section", "main", "aside", "nav"]);

/** What the element reader does with an element, found with one lookup per tag rather than one per question. */
interface ElementRole {
  hidden: boolean;
  block: ElementType | "classify" | undefined;
  furniture: ElementType | undefined;
  sectioning: boolean;
}
/** Every element the element reader acts on, and its role; the others (`b`, `span`, `a`...) only carry text. */
const ELEMENT_ROLES: ReadonlyMap<string, ElementRole> = new Map(
  [...HIDDEN, ...BLOCK_TYPES.keys(), ...FURNITURE.keys(), ...SECTIONING, "table", "tr", "td", "th", "br", "img"].map((name) => [
    name,
    { hidden: HIDDEN.has(name), block: BLOCK_TYPES.get(name), furniture: FURNITURE.get(name), sectioning: SECTIONING.has(name) },
  ]),
);

/** An HTML document's visible text (see htmlToText) and its elements (see htmlElements), read in one pass. */
export interface HtmlDocument {
  text: string;
  elements: Element[];
}

/**
 * The elements of an HTML (or XHTML) document, read with scanMarkup (linear time on any input):
 * `h1`-`h6` are Titles of their level, `p` NarrativeText, `li` ListItems (a `p` or `div` directly
 * in one too), `table` a Table of its cells on their grid (spans filled with empty cells), after its
 * `caption` as a FigureCaption, `pre` CodeSnippets as written, a page's own `header` and `footer`
 * Header and Footer; loose text is typed by the plain-text heuristics. Scripts and styles are skipped.
 */
export function htmlElements(html: string, tables = new TableBudget()): Element[] {
  return readHtml(html, tables).elements;
}

/** The text and the elements of an HTML page; a page nested too deep to read as a tree is read as its visible text. */
export function readHtml(html: string, tables = new TableBudget()): HtmlDocument {
  const text = new TextReader();
  const elements = new ElementReader(tables);
  try {
    scanMarkup(html, {
      onopentag(name, attributes) {
        const roles = TAG_ROLES.get(name);
        if (roles === undefined) return; // an inline element (`b`, `span`, `a`...): neither reader acts on it
        text.open(name, roles.text);
        elements.open(name, roles.element, attributes);
      },
      ontext(piece) {
        text.text(piece);
        elements.text(piece);
      },
      onclosetag(name) {
        const roles = TAG_ROLES.get(name);
        if (roles === undefined) return;
        text.close(name, roles.text);
        elements.close(name, roles.element);
      },
      oncomment: () => text.comment(),
    });
    return { text: text.result(), elements: elements.result() };
  } catch (error) {
    if (!(error instanceof MarkupTooDeepError)) throw error;
    const flat = htmlToText(html);
    return { text: flat, elements: plainTextElements(flat) };
  }
}

/** Elements whose content is not shown. */
const TEXT_HIDDEN = new Set(["script", "style", "template"]);
/** Elements that start a new line of text; inline elements (`b`, `sub`, `a`...) separate nothing: `H<sub>2</sub>O` is one word. */
const TEXT_BLOCKS: ReadonlySet<string> = new Set([
  ...BLOCK_TYPES.keys(),
  ...FURNITURE.keys(),
  ...SECTIONING,
  ...[
    "html",
    "head",
    "title",
    "br",
    "hr",
    "table",
    "tr",
    "thead",
    "tbody",
    "tfoot",
    "fieldset",
    "legend",
    "details",
    "summary",
    "option",
    "dialog",
    "hgroup",
    "menu",
  ],
]);
/** Table cells: the cells of a row are separated by a space. */
const TEXT_CELLS = new Set(["td", "th"]);
/**
 * What an element does to the visible text, found with one lookup per tag: a block starts a new
 * line; a cell separates the words around it; a hidden element's content is not shown, and it
 * separates the words around it too.
 */
type TextRole = "block" | "cell" | "hidden";
const TEXT_ROLES: ReadonlyMap<string, TextRole> = new Map([
  ...[...TEXT_BLOCKS].map((name): [string, TextRole] => [name, "block"]),
  ...[...TEXT_CELLS].map((name): [string, TextRole] => [name, "cell"]),
  ...[...TEXT_HIDDEN].map((name): [string, TextRole] => [name, "hidden"]),
]);
/** Both readers' roles of every element either acts on, found with one lookup per tag. */
const TAG_ROLES: ReadonlyMap<string, { text: TextRole | undefined; element: ElementRole | undefined }> = new Map(
  [...new Set([...TEXT_ROLES.keys(), ...ELEMENT_ROLES.keys()])].map((name) => [name, { text: TEXT_ROLES.get(name), element: ELEMENT_ROLES.get(name) }]),
);

/**
 * The visible text of an HTML document: no scripts, styles, comments or tags; block elements break
 * lines, table cells, scripts, styles and comments separate words, inline elements separate
 * nothing; character references decoded; runs of spaces folded, except in `pre`, kept as written
 * (but a newline just after its start). Read as a flat stream of tags, so no nesting, however deep,
 * is refused.
 */
export function htmlToText(html: string): string {
  const reader = new TextReader();
  scanMarkup(
    html,
    {
      onopentag: (name) => reader.open(name, TEXT_ROLES.get(name)),
      ontext: (piece) => reader.text(piece),
      onclosetag: (name) => reader.close(name, TEXT_ROLES.get(name)),
      oncomment: () => reader.comment(),
    },
    { flat: true },
  );
  return reader.result();
}

/** Collects the visible text as tags and text go by. */
class TextReader {
  /** The text before the current run, each run folded (or a `pre`'s, raw). */
  readonly #done: string[] = [];
  /** The current run of text, folded when it ends (at a `pre`, or at the end). */
  #run = "";
  #hidden = 0;
  /** How many `pre` are open: their text is kept as written. */
  #pre = 0;
  /** What the tags since the last text put between it and the next: nothing, a space or a line break. */
  #separator = "";

  /** An element starts: `role` is its TEXT_ROLES entry. */
  open(name: string, role: TextRole | undefined): void {
    if (role === "hidden") this.#hidden++;
    this.#separate(role);
    // A `pre`'s text starts a run of its own, with nothing before it.
    if (name === "pre" && this.#pre++ === 0) this.#endRun(false);
  }

  /** Whether the last piece of text ended with a space. */
  #spaced = false;

  text(piece: string): void {
    if (this.#hidden > 0) return;
    // A space beside a space would fold into one (foldText): it is not written, so most lines need no folding.
    if (this.#separator === "\n" || (this.#separator === " " && !this.#spaced && piece.charCodeAt(0) !== SPACE)) this.#run += this.#separator;
    this.#separator = "";
    this.#run += piece;
    this.#spaced = piece.charCodeAt(piece.length - 1) === SPACE;
  }

  close(name: string, role: TextRole | undefined): void {
    if (role === "hidden") this.#hidden = Math.max(0, this.#hidden - 1);
    if (name === "pre" && this.#pre > 0 && --this.#pre === 0) this.#endRun(true);
    this.#separate(role);
  }

  /** A comment separates the words around it, as a cell does. */
  comment(): void {
    this.#separate("cell");
  }

  #separate(role: TextRole | undefined): void {
    if (role === "block") this.#separator = "\n";
    else if (role !== undefined && this.#separator === "") this.#separator = " ";
  }

  /** Ends the current run: a `pre`'s (`raw`) as written, but its first newline and its trailing whitespace; other text folded. */
  #endRun(raw: boolean): void {
    const text = this.#run;
    this.#run = "";
    const kept = raw ? preText(text) : foldText(text);
    if (kept !== "") this.#done.push(kept);
    this.#separator = "";
  }

  result(): string {
    this.#endRun(this.#pre > 0);
    return this.#done.join("\n");
  }
}

/** A `pre`'s text as shown: as written, without the newline just after its start tag (as HTML drops it) and its trailing whitespace. */
function preText(text: string): string {
  const first = text.startsWith("\r\n") ? 2 : text.charCodeAt(0) === 0x0a ? 1 : 0;
  return text.slice(first).trimEnd();
}

const SPACE = 0x20;

/** Runs of spaces and tabs, and lone tabs and other spacing characters (a single space between words is left alone). */
const SPACING = /[ \t\r\f\v]{2,}|[\t\r\f\v]/g;
/** The same, no-break spaces included: the visible text folds them too. */
const TEXT_SPACING = /[ \t\r\f\v\u00a0]{2,}|[\t\r\f\v\u00a0]/g;
/** Spaces around a line break (a bare line break, and blank lines, are left alone). */
const SPACED_BREAK = / +\n *|\n +/g;
/** Line breaks with any whitespace around them, blank lines included: the visible text has none. */
const TEXT_BREAK = / +\n\s*|\n\s+/g;
/** Whitespace that is not one space between words. */
const NOT_ONE_SPACE = /\s{2,}|[^\S ]/g;
/**
 * Whitespace in trimmed text other than single spaces between words; most prose has none, and then
 * skips the replacements. Not `/^\S+(?: \S+)*$/`: V8 matches that repetition recursively, and a
 * paragraph of five million words overflowed the stack.
 */
const NOT_SINGLE_SPACED = /\s\s|[^\S ]/;

/** An element's text trimmed, runs of spaces and tabs as one space, no spaces around its line breaks (text already so: `singleSpaced`). */
function foldSpaces(text: string, singleSpaced: boolean): string {
  return singleSpaced ? text : text.replace(SPACING, " ").replace(SPACED_BREAK, "\n").trim();
}

/** The visible text folded: as foldSpaces, no-break spaces as spaces, and no blank lines. */
function foldText(text: string): string {
  const trimmed = text.trim();
  return !NOT_SINGLE_SPACED.test(trimmed) ? trimmed : trimmed.replace(TEXT_SPACING, " ").replace(TEXT_BREAK, "\n").trim();
}

/** `text` on one line: every run of whitespace as one space (text already so: `singleSpaced`). */
function oneLine(text: string, singleSpaced: boolean): string {
  return singleSpaced ? text : text.replace(NOT_ONE_SPACE, " ");
}

/** The most columns a span reaches (the HTML standard caps `colspan` at 1000): a span is cut at the 1000th column. */
const MAX_SPAN_COLUMNS = 1000;
/** The most rows a `rowspan` covers, as the HTML standard caps it. */
const MAX_ROWSPAN = 65534;

/** A run of whitespace: a caption's runs, and a cell's text's, are one space each. */
const WHITESPACE = /\s+/g;
/** A cell's runs of whitespace other than line breaks are one space each; its line breaks (and blank lines) with the space around them, one line break. */
const CELL_SPACING = /[^\S\n]+/g;
const CELL_BREAK = / ?\n[\n ]*/g;

/** A `colspan` or `rowspan` value as HTML reads it (leading digits), 1 when absent or invalid, at most `max`. */
function span(value: string | undefined, max: number): number {
  if (value === undefined) return 1;
  const parsed = Number.parseInt(value, 10);
  return parsed >= 1 ? Math.min(parsed, max) : 1;
}

/** Collects the elements as tags and text go by (see htmlElements). */
class ElementReader {
  readonly #elements: Element[] = [];
  /** The document's (an EPUB's chapters and a Markdown file's HTML blocks share one). */
  readonly #tables: TableBudget;
  readonly #blocks: string[] = [];
  #buffer = "";
  #hidden = 0;
  #sectioning = 0;
  #furniture: { type: ElementType; depth: number } | undefined;
  #tableDepth = 0;
  #rows: string[][] = [];
  #row: string[] | undefined;
  /** Whether a cell of the current row has text (rows without are left out). */
  #rowHasText = false;
  #cell: string | undefined;
  /** The current cell's columns and rows (numbers, not a pair: no array per cell). */
  #cellColumns = 1;
  #cellRows = 1;
  /** The current row's index in its table, counting the rows left out. */
  #rowIndex = 0;
  /** Per column, the index of the first row a `rowspan` above no longer covers. */
  #spannedUntil: number[] = [];
  /** The index of the first row no `rowspan` covers. */
  #spansEnd = 0;
  /** What is left of MAX_SPANNED_CELLS. */
  #spanBudget = MAX_SPANNED_CELLS;
  /** The table's caption while it is read (then its text, folded). */
  #caption: string | undefined;
  #captionText = "";

  constructor(tables: TableBudget) {
    this.#tables = tables;
  }

  #flush(): void {
    if (this.#buffer === "") return;
    const tag = this.#blocks.at(-1) ?? "body";
    if (tag === "pre" && this.#furniture === undefined) {
      this.#flushCode();
      return;
    }
    const trimmed = this.#buffer.trim();
    this.#buffer = "";
    // Tested once: most blocks are prose with single spaces, which neither folding changes.
    const singleSpaced = !NOT_SINGLE_SPACED.test(trimmed);
    const text = foldSpaces(trimmed, singleSpaced);
    if (text === "") return;
    if (this.#furniture !== undefined) {
      this.#elements.push({ type: this.#furniture.type, text });
      return;
    }
    // A loose list's item (`<li><p>Item</p></li>`) is a ListItem.
    const inItem = (tag === "p" || tag === "div") && this.#blocks.at(-2) === "li";
    const type = inItem ? "ListItem" : (BLOCK_TYPES.get(tag) ?? "classify");
    if (type === "Title") this.#elements.push({ type, text: oneLine(text, singleSpaced), level: headingLevel(Number(tag[1])) });
    else if (type === "classify") this.#elements.push(classifyText(text, !text.includes("\n")));
    else this.#elements.push({ type, text: type === "NarrativeText" ? oneLine(text, singleSpaced) : text });
  }

  /** A `pre`'s text as a CodeSnippet, as written (see preText): code's indentation and spacing are its meaning. */
  #flushCode(): void {
    const text = preText(this.#buffer);
    this.#buffer = "";
    if (text.trim() !== "") this.#elements.push({ type: "CodeSnippet", text });
  }

  /** Whether column `column` of the current row is covered by a `rowspan` above. */
  #spanned(column: number): boolean {
    return (this.#spannedUntil[column] ?? 0) > this.#rowIndex;
  }

  /** Adds an empty cell (a spanned slot) to the current row, if the budget allows it. */
  #fill(row: string[]): boolean {
    if (this.#spanBudget <= 0) return false;
    this.#spanBudget--;
    row.push("");
    return true;
  }

  /** Places the current cell in its row: after the slots spans above cover, followed by the empty slots its own span covers. */
  #endCell(): void {
    if (this.#cell === undefined) return;
    this.#row ??= [];
    const row = this.#row;
    while (this.#spanned(row.length) && this.#fill(row));
    const text = this.#cell.replace(CELL_SPACING, " ").replace(CELL_BREAK, "\n").trim();
    const column = row.length;
    row.push(text);
    if (text !== "") this.#rowHasText = true;
    this.#cell = undefined;
    const columns = this.#cellColumns;
    const rows = this.#cellRows;
    // A cell written past the last column a span reaches spans none but its own.
    const end = Math.max(column + 1, Math.min(column + columns, MAX_SPAN_COLUMNS));
    while (row.length < end && this.#fill(row));
    if (rows > 1 && this.#spanBudget >= end - column) {
      this.#spanBudget -= end - column;
      for (let index = column; index < end; index++) this.#spannedUntil[index] = this.#rowIndex + rows;
      this.#spansEnd = Math.max(this.#spansEnd, this.#rowIndex + rows);
    }
  }

  #endRow(): void {
    this.#endCell();
    const row = this.#row;
    this.#row = undefined;
    if (row === undefined) return;
    // The slots a rowspan covers past the row's last cell (up to the widest column a span reached).
    if (this.#rowIndex < this.#spansEnd) while (row.length < this.#spannedUntil.length && this.#fill(row));
    if (this.#rowHasText) this.#rows.push(row);
    this.#rowHasText = false;
    this.#rowIndex++;
  }

  /** A table starts: its rows and spans start empty. */
  #startTable(): void {
    this.#flush();
    this.#rows = [];
    this.#rowIndex = 0;
    this.#spannedUntil = [];
    this.#spansEnd = 0;
    this.#caption = undefined;
    this.#captionText = "";
  }

  /** A table ends: its caption, as a FigureCaption, then the Table. */
  #endTable(): void {
    this.#endRow();
    this.#endCaption();
    const caption = this.#captionText.replace(WHITESPACE, " ").trim();
    if (caption !== "") this.#elements.push({ type: "FigureCaption", text: caption });
    const table = this.#tables.table(this.#rows);
    if (table !== undefined) this.#elements.push(table);
  }

  #endCaption(): void {
    if (this.#caption !== undefined) this.#captionText += ` ${this.#caption}`;
    this.#caption = undefined;
  }

  /** A tag inside the outer table (`depth` 1) or a table in it: rows and cells; any other block separates a cell's words. */
  #openInTable(name: string, attributes: TagAttributes): void {
    if (this.#tableDepth === 1 && (name === "tr" || name === "td" || name === "th")) {
      this.#endCaption(); // a row ends a caption left open
      if (name === "tr") {
        this.#endRow();
        this.#row = [];
      } else {
        this.#endCell();
        this.#cell = "";
        this.#cellColumns = span(attributes.get("colspan"), MAX_SPAN_COLUMNS);
        this.#cellRows = span(attributes.get("rowspan"), MAX_ROWSPAN);
      }
    } else if (this.#tableDepth === 1 && name === "caption" && this.#cell === undefined) this.#caption = "";
    else this.#separateInCell(name);
  }

  /**
   * A block's start or end, or a line break, inside a cell: a line break between the lines around it,
   * as a DOCX cell keeps its paragraphs (a nested table's cells of one row: a space), so that a
   * cell's lines are not read as one. In the caption, a space.
   */
  #separateInCell(name: string): void {
    if (name === "img") return;
    if (this.#cell !== undefined) this.#cell += name === "td" || name === "th" ? " " : "\n";
    else if (this.#caption !== undefined) this.#caption += " ";
  }

  /** An element starts: `role` is its ELEMENT_ROLES entry. */
  open(name: string, role: ElementRole | undefined, attributes: TagAttributes): void {
    if (role === undefined) return;
    if (role.hidden) this.#hidden++;
    if (this.#hidden > 0) return;
    if (this.#tableDepth > 0 && name !== "table") {
      this.#openInTable(name, attributes);
      return;
    }
    if (name === "table") {
      if (this.#tableDepth === 0) this.#startTable();
      else this.#separateInCell(name);
      this.#tableDepth++;
      return;
    }
    const alt = name === "img" ? attributes.get("alt")?.trim() : undefined;
    if (name === "br") this.#buffer += "\n";
    else if (alt) {
      this.#flush();
      this.#elements.push({ type: "Image", text: alt });
    } else if (role.furniture !== undefined && this.#sectioning === 0 && this.#furniture === undefined) {
      this.#flush();
      this.#furniture = { type: role.furniture, depth: 1 };
    } else if (this.#furniture !== undefined && role.furniture === this.#furniture.type) this.#furniture.depth++;
    else if (role.block !== undefined) {
      this.#flush();
      this.#blocks.push(name);
    }
    if (role.sectioning) this.#sectioning++;
  }

  text(piece: string): void {
    if (this.#hidden > 0) return;
    if (this.#tableDepth > 0) {
      // The source's own line breaks are spacing: a cell's lines are made by its tags.
      if (this.#cell !== undefined) this.#cell += piece.replace(WHITESPACE, " ");
      else if (this.#caption !== undefined) this.#caption += piece;
      return;
    }
    this.#buffer += piece;
  }

  close(name: string, role: ElementRole | undefined): void {
    if (role === undefined) return;
    if (role.hidden) {
      this.#hidden = Math.max(0, this.#hidden - 1);
      return;
    }
    if (this.#hidden > 0) return;
    if (name === "table" && this.#tableDepth > 0) {
      this.#tableDepth--;
      if (this.#tableDepth === 0) this.#endTable();
      else this.#separateInCell(name);
      return;
    }
    if (this.#tableDepth > 0) {
      if (this.#tableDepth > 1) this.#separateInCell(name);
      else if (name === "td" || name === "th") this.#endCell();
      else if (name === "tr") this.#endRow();
      else if (name === "caption") this.#endCaption();
      else this.#separateInCell(name);
      return;
    }
    if (role.sectioning) this.#sectioning = Math.max(0, this.#sectioning - 1);
    if (this.#furniture !== undefined && role.furniture === this.#furniture.type) {
      this.#furniture.depth--;
      if (this.#furniture.depth === 0) {
        this.#flush();
        this.#furniture = undefined;
      }
      return;
    }
    const index = role.block === undefined ? -1 : this.#blocks.lastIndexOf(name);
    if (index !== -1) {
      this.#flush();
      while (this.#blocks.length > index) this.#blocks.pop();
    }
  }

  result(): Element[] {
    this.#flush();
    return this.#elements;
  }
}
