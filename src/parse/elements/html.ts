import { type Element, type ElementType, headingLevel } from "./element.ts";
import { htmlToText } from "../text.ts";
import { MarkupTooDeepError, parseMarkup } from "./markup.ts";
import { classifyText, plainTextElements } from "./plain-text.ts";
import { tableElement } from "./table.ts";

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

/** How the markup is read: HTML (tag names folded to lowercase) or XML (XHTML in EPUB, OpenDocument). */
export interface MarkupOptions {
  xmlMode?: boolean;
}

/**
 * The elements of an HTML (or XHTML) document, read with htmlparser2 (a tolerant, linear-time
 * tokenizer): `h1`-`h6` are Titles of their level, `p` NarrativeText, `li` ListItems, `table`
 * a Table of its cells, `pre` CodeSnippets, a page's own `header` and `footer` Header and Footer;
 * loose text is typed by the plain-text heuristics. Scripts and styles are skipped.
 * A page nested too deep to read as a tree is read as its visible text.
 */
export function htmlElements(html: string, options: MarkupOptions = {}): Element[] {
  try {
    return markupElements(html, options);
  } catch (error) {
    if (error instanceof MarkupTooDeepError) return plainTextElements(htmlToText(html));
    throw error;
  }
}

function markupElements(html: string, options: MarkupOptions): Element[] {
  const elements: Element[] = [];
  const blocks: string[] = [];
  let buffer = "";
  let hidden = 0;
  let sectioning = 0;
  let furniture: { type: ElementType; depth: number } | undefined;
  let tableDepth = 0;
  let rows: string[][] = [];
  let row: string[] | undefined;
  let cell: string | undefined;

  const flush = () => {
    const text = buffer
      .replace(/[ \t\r\f\v]+/g, " ")
      .replace(/ *\n */g, "\n")
      .trim();
    buffer = "";
    if (text === "") return;
    if (furniture !== undefined) {
      elements.push({ type: furniture.type, text });
      return;
    }
    const tag = blocks.at(-1) ?? "body";
    const type = BLOCK_TYPES.get(tag) ?? "classify";
    if (type === "Title") elements.push({ type, text: text.replace(/\s+/g, " "), level: headingLevel(Number(tag[1])) });
    else if (type === "classify") elements.push(classifyText(text, !text.includes("\n")));
    else if (type === "CodeSnippet") elements.push({ type, text });
    else elements.push({ type, text: type === "NarrativeText" ? text.replace(/\s+/g, " ") : text });
  };

  parseMarkup(
    html,
    {
      onopentag(name, attributes) {
        if (HIDDEN.has(name)) hidden++;
        if (hidden > 0) return;
        if (tableDepth > 0 && name !== "table") {
          if (tableDepth > 1) return;
          if (name === "tr") row = [];
          else if (name === "td" || name === "th") cell = "";
          else if (name === "br" && cell !== undefined) cell += "\n";
          return;
        }
        if (name === "table") {
          if (tableDepth === 0) {
            flush();
            rows = [];
          }
          tableDepth++;
          return;
        }
        if (name === "br") buffer += "\n";
        else if (name === "img" && attributes.alt?.trim()) {
          flush();
          elements.push({ type: "Image", text: attributes.alt.trim() });
        } else if (FURNITURE.has(name) && sectioning === 0 && furniture === undefined) {
          flush();
          furniture = { type: FURNITURE.get(name)!, depth: 1 };
        } else if (furniture !== undefined && FURNITURE.get(name) === furniture.type) furniture.depth++;
        else if (BLOCK_TYPES.has(name)) {
          flush();
          blocks.push(name);
        }
        if (SECTIONING.has(name)) sectioning++;
      },
      ontext(text) {
        if (hidden > 0) return;
        if (tableDepth > 0) {
          if (cell !== undefined) cell += text;
          return;
        }
        buffer += text;
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) {
          hidden = Math.max(0, hidden - 1);
          return;
        }
        if (hidden > 0) return;
        if (name === "table" && tableDepth > 0) {
          tableDepth--;
          if (tableDepth === 0) {
            if (row !== undefined) rows.push(row);
            row = undefined;
            const table = tableElement(rows);
            if (table !== undefined) elements.push(table);
          }
          return;
        }
        if (tableDepth > 0) {
          if (tableDepth > 1) return;
          if ((name === "td" || name === "th") && cell !== undefined) {
            row ??= [];
            row.push(cell.replace(/\s+/g, " ").trim());
            cell = undefined;
          } else if (name === "tr" && row !== undefined) {
            rows.push(row);
            row = undefined;
          }
          return;
        }
        if (SECTIONING.has(name)) sectioning = Math.max(0, sectioning - 1);
        if (furniture !== undefined && FURNITURE.get(name) === furniture.type) {
          furniture.depth--;
          if (furniture.depth === 0) {
            flush();
            furniture = undefined;
          }
          return;
        }
        if (BLOCK_TYPES.has(name) && blocks.includes(name)) {
          flush();
          blocks.length = blocks.lastIndexOf(name);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: !options.xmlMode, xmlMode: options.xmlMode ?? false, recognizeSelfClosing: true },
  );
  flush();
  return elements;
}
