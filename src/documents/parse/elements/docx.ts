import { insertAt } from "../../../platform/arrays.ts";
import { readParts } from "../zip.ts";
import { type Element, headingLevel } from "./element.ts";
import { classifyText } from "./plain-text.ts";
import { TableBudget } from "./table.ts";
import { scanWord, WordTags } from "./word-markup.ts";

const DOCUMENT = "word/document.xml";
const STYLES = "word/styles.xml";
const HEADER_FOOTER = /^word\/(header|footer)(\d+)\.xml$/;

/** What a paragraph style says about structure, decided once per style. */
interface ParagraphStyle {
  /** Its paragraphs are Titles of this level (a style named Title or "heading N"). */
  titleLevel?: number;
  outlineLevel?: number;
  /** Its paragraphs are list items (numbered, or a list style). */
  list: boolean;
}

/** The structure a style's name, outline level and numbering give its paragraphs. */
function paragraphStyle(name: string, outlineLevel: number | undefined, numbered: boolean): ParagraphStyle {
  const heading = /^heading\s*(\d)$/.exec(name)?.[1];
  const titleLevel = heading !== undefined ? headingLevel(Number(heading)) : name === "title" ? 1 : undefined;
  return { titleLevel, outlineLevel, list: numbered || name.includes("list") };
}

const NO_STYLE: ParagraphStyle = { list: false };

/** A DOCX's text (its body's paragraphs, separated by a blank line) and its elements. */
export interface WordDocument {
  text: string;
  elements: Element[];
}

/**
 * Reads a DOCX package with scanWord: the body's paragraphs and tables in order,
 * paragraphs typed by their style (Title, "heading N" and outline levels as Titles of that level;
 * numbering or a list style as ListItems), tables as rows of cells, headers and footers (a footer
 * that holds only a number is a PageNumber). A text box's paragraphs (nested in the paragraph the box
 * is anchored in) follow that paragraph, each typed by its own style. Text boxes' fallback copies for older readers are skipped,
 * and so are the old properties a tracked change keeps (`w:pPrChange`, in the body and in the styles; run properties are not read).
 */
export function readWordDocument(bytes: Uint8Array): WordDocument {
  const parts = readParts(bytes, (name) => name === DOCUMENT || name === STYLES || HEADER_FOOTER.test(name));
  const document = parts.get(DOCUMENT);
  if (document === undefined) throw new Error(`it has no ${DOCUMENT}`);
  const styles = readStyles(parts.get(STYLES) ?? "");
  // The body's tables, then the headers' and footers' (which give only their paragraphs), share one budget.
  const tables = new TableBudget();
  const body = readBody(document, styles, tables);
  const furniture = [...parts]
    .flatMap(([name, xml]) => {
      const match = HEADER_FOOTER.exec(name);
      return match === null ? [] : [{ kind: match[1]!, number: Number(match[2]), xml }];
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.number - b.number);
  const headers = furniture.filter((part) => part.kind === "header").flatMap((part) => furnitureElements(part.xml, styles, tables, "Header"));
  const footers = furniture.filter((part) => part.kind === "footer").flatMap((part) => furnitureElements(part.xml, styles, tables, "Footer"));
  return { text: body.paragraphs.join("\n\n").trim(), elements: [...unique(headers), ...body.elements, ...unique(footers)] };
}

/** A header or footer part's paragraphs as elements of its type; a number alone is a PageNumber (Word's PAGE field, as last shown). */
function furnitureElements(xml: string, styles: Map<string, ParagraphStyle>, tables: TableBudget, type: "Header" | "Footer"): Element[] {
  return readBody(xml, styles, tables).paragraphs.flatMap((text): Element[] => {
    const trimmed = text.trim();
    if (trimmed === "") return [];
    return [{ type: /^(?:page\s*)?\d+(?:\s*(?:of|\/)\s*\d+)?$/i.test(trimmed) ? "PageNumber" : type, text: trimmed }];
  });
}

/** Each distinct header or footer once: sections (first page, even pages) often repeat the same text. */
function unique(elements: Element[]): Element[] {
  const seen = new Set<string>();
  return elements.filter((element) => !seen.has(`${element.type}:${element.text}`) && seen.add(`${element.type}:${element.text}`));
}

/** The tags of a styles part that readStyles acts on. */
const STYLE_TAGS = new WordTags(["w:style", "w:name", "w:outlineLvl", "w:numId", "w:pPrChange"]);

function readStyles(xml: string): Map<string, ParagraphStyle> {
  const styles = new Map<string, ParagraphStyle>();
  let current: { id: string; name: string; outlineLevel?: number; numbered: boolean } | undefined;
  // Inside a tracked change's record of a style's old properties (`w:pPrChange`): none of it applies.
  let inChange = false;
  scanWord(xml, STYLE_TAGS, {
    onopentag(name, attributes) {
      if (name === "w:style") current = { id: attributes.get("w:styleId") ?? "", name: "", numbered: false };
      else if (current === undefined) return;
      else if (name === "w:pPrChange") inChange = true;
      else if (name === "w:name") current.name = (attributes.get("w:val") ?? "").toLowerCase();
      else if (inChange) return;
      else if (name === "w:outlineLvl") current.outlineLevel = Number(attributes.get("w:val"));
      else if (name === "w:numId") current.numbered = attributes.get("w:val") !== "0";
    },
    onclosetag(name) {
      if (name === "w:pPrChange") inChange = false;
      if (name === "w:style" && current !== undefined) styles.set(current.id, paragraphStyle(current.name, current.outlineLevel, current.numbered));
      if (name === "w:style") {
        current = undefined;
        inChange = false;
      }
    },
    ontext() {},
  });
  return styles;
}

interface Paragraph {
  text: string;
  styleId: string | undefined;
  outlineLevel: number | undefined;
  numbered: boolean;
  /** Its `<w:p>` was read: a `<w:p>` read before its end starts a paragraph nested in it (a text box's). */
  open: boolean;
  /**
   * Where it goes in the part's paragraphs, its elements and its cell: where they ended when it
   * started, before what the paragraphs nested in it (a text box's) added (-1: at the end; a small
   * integer, so the fields stay small integers and a store allocates nothing).
   */
  paragraphAt: number;
  elementAt: number;
  cellAt: number;
}

/** A paragraph with every field set from the start: paragraphs all share one shape. */
function newParagraph(open = false, paragraphAt = -1, elementAt = -1, cellAt = -1): Paragraph {
  return { text: "", styleId: undefined, outlineLevel: undefined, numbered: false, open, paragraphAt, elementAt, cellAt };
}

/** Paragraphs nested in paragraphs (text boxes in text boxes) that are read apart; deeper ones join the paragraph holding them. */
const MAX_NESTED_PARAGRAPHS = 8;

/** The tags of a body, header or footer part that readBody acts on. */
const BODY_TAGS = new WordTags([
  "w:p",
  "w:pPr",
  "w:pPrChange",
  "w:pStyle",
  "w:outlineLvl",
  "w:numId",
  "w:tab",
  "w:br",
  "w:cr",
  "w:noBreakHyphen",
  "w:tbl",
  "w:tr",
  "w:tc",
  "w:gridSpan",
  "w:tcPrChange",
]);

/** The widest span a cell is read with: Word's widest table has 63 columns. */
const MAX_GRID_SPAN = 63;
/** The empty cells spans may add to a part in all: a hostile span is cheap to write and each is an array slot. */
const MAX_SPANNED_CELLS = 100_000;

/** The grid columns a cell's `w:gridSpan` value says it spans, 1 to MAX_GRID_SPAN. */
function gridSpan(value: string | undefined): number {
  const span = Math.trunc(Number(value));
  return span > 1 ? Math.min(span, MAX_GRID_SPAN) : 1;
}

/** The paragraphs (in order, table cells' included) and the elements of a WordprocessingML part. */
function readBody(xml: string, styles: Map<string, ParagraphStyle>, tables: TableBudget): { paragraphs: string[]; elements: Element[] } {
  const paragraphs: string[] = [];
  const elements: Element[] = [];
  let paragraph = newParagraph();
  let inProperties = false;
  /** Inside a tracked change's record of the old properties (`w:pPrChange`, `w:tcPrChange`): none of it applies. */
  let inChange = false;
  let tableDepth = 0;
  let rows: string[][] = [];
  let cell: string[] | undefined;
  /** The grid columns the cell being read spans: it is followed by span - 1 empty cells, keeping the next under its column. */
  let span = 1;
  let spannedCells = MAX_SPANNED_CELLS;

  /** The paragraphs holding the one being read (a text box's paragraph is nested in the one it is anchored in). */
  const holders: Paragraph[] = [];
  /** The `<w:p>`s past MAX_NESTED_PARAGRAPHS still open: their text is the paragraph's being read. */
  let flattened = 0;

  const startParagraph = () => {
    if (!paragraph.open) {
      // The paragraph made when the last one ended (it may hold text read outside any <w:p>) is this one.
      paragraph.open = true;
      paragraph.paragraphAt = paragraphs.length;
      paragraph.elementAt = elements.length;
      paragraph.cellAt = cell?.length ?? 0;
    } else if (holders.length < MAX_NESTED_PARAGRAPHS) {
      holders.push(paragraph);
      paragraph = newParagraph(true, paragraphs.length, elements.length, cell?.length ?? 0);
    } else flattened++;
  };
  // A paragraph goes before the paragraphs nested in it, which ended first, and then the one holding it is read on.
  const endParagraph = () => {
    insertAt(paragraphs, paragraph.paragraphAt, paragraph.text);
    if (tableDepth > 0) {
      if (cell !== undefined) insertAt(cell, paragraph.cellAt, paragraph.text);
    } else {
      const element = paragraphElement(paragraph, styles);
      if (element !== undefined) insertAt(elements, paragraph.elementAt, element);
    }
    paragraph = holders.pop() ?? newParagraph();
    inChange = false;
  };
  scanWord(xml, BODY_TAGS, {
    onopentag(name, attributes) {
      switch (name) {
        case "w:p":
          startParagraph();
          break;
        case "w:pPr":
          inProperties = true;
          break;
        case "w:pPrChange":
        case "w:tcPrChange":
          inChange = true;
          break;
        case "w:pStyle":
          if (inProperties && !inChange) paragraph.styleId = attributes.get("w:val");
          break;
        case "w:outlineLvl":
          if (inProperties && !inChange) paragraph.outlineLevel = Number(attributes.get("w:val"));
          break;
        case "w:numId":
          if (inProperties && !inChange) paragraph.numbered = attributes.get("w:val") !== "0";
          break;
        case "w:tab":
          if (!inProperties) paragraph.text += "\t";
          break;
        case "w:br":
        case "w:cr":
          paragraph.text += "\n";
          break;
        case "w:noBreakHyphen":
          // A plain hyphen, as one searches for it ("555-1234"); an optional one (w:softHyphen) is not text.
          paragraph.text += "-";
          break;
        case "w:tbl":
          if (tableDepth === 0) rows = [];
          tableDepth++;
          break;
        case "w:tr":
          if (tableDepth === 1) rows.push([]);
          break;
        case "w:tc":
          if (tableDepth === 1) {
            cell = [];
            span = 1;
          }
          break;
        case "w:gridSpan":
          if (tableDepth === 1 && !inChange) span = gridSpan(attributes.get("w:val"));
          break;
      }
    },
    ontext(text) {
      paragraph.text += text;
    },
    onclosetag(name) {
      // The old `w:pPr` a change record holds ends inside the current one, which it does not end.
      if (name === "w:pPr") inProperties = inChange;
      else if (name === "w:pPrChange" || name === "w:tcPrChange") inChange = false;
      else if (name === "w:p") {
        if (flattened === 0) endParagraph();
        else {
          flattened--;
          paragraph.text += "\n";
        }
      } else if (name === "w:tc" && tableDepth === 1 && cell !== undefined) {
        const row = rows.at(-1);
        row?.push(cell.join("\n").trim());
        for (; row !== undefined && span > 1 && spannedCells > 0; span--, spannedCells--) row.push("");
        cell = undefined;
      } else if (name === "w:tbl") {
        tableDepth = Math.max(0, tableDepth - 1);
        if (tableDepth === 0) {
          const table = tables.table(rows);
          if (table !== undefined) elements.push(table);
        }
      }
    },
  });
  // What a part left open at its end: the paragraphs holding others, and one with text.
  while (holders.length > 0 || paragraph.text !== "") endParagraph();
  return { paragraphs, elements };
}

function paragraphElement(paragraph: Paragraph, styles: Map<string, ParagraphStyle>): Element | undefined {
  const text = paragraph.text.trim();
  if (text === "") return undefined;
  const style = paragraph.styleId === undefined ? NO_STYLE : (styles.get(paragraph.styleId) ?? rememberStyleOfId(paragraph.styleId, styles));
  if (style.titleLevel !== undefined) return { type: "Title", text, level: style.titleLevel };
  const outline = paragraph.outlineLevel ?? style.outlineLevel;
  if (outline !== undefined && outline >= 0 && outline < 9) return { type: "Title", text, level: headingLevel(outline + 1) };
  if (paragraph.numbered || style.list) return { type: "ListItem", text };
  return classifyText(text, false);
}

/** Reads a style the styles part does not define from its id ("Heading1", "ListParagraph"), and adds it to `styles`. */
function rememberStyleOfId(id: string, styles: Map<string, ParagraphStyle>): ParagraphStyle {
  const style = paragraphStyle(id.toLowerCase(), undefined, false);
  styles.set(id, style);
  return style;
}
