import { readParts } from "../zip.ts";
import { type Element, headingLevel } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { classifyText } from "./plain-text.ts";
import { tableElement } from "./table.ts";

const DOCUMENT = "word/document.xml";
const STYLES = "word/styles.xml";
const HEADER_FOOTER = /^word\/(header|footer)(\d+)\.xml$/;

/** What a paragraph style says about structure. */
interface ParagraphStyle {
  name: string;
  outlineLevel?: number;
  numbered: boolean;
}

/** A DOCX's text (its body's paragraphs, separated by a blank line) and its elements. */
export interface WordDocument {
  text: string;
  elements: Element[];
}

/**
 * Reads a DOCX package with scanMarkup (XML): the body's paragraphs and tables in order,
 * paragraphs typed by their style (Title, "heading N" and outline levels as Titles of that level;
 * numbering or a list style as ListItems), tables as rows of cells, headers and footers (a footer
 * that holds only a number is a PageNumber). Text boxes' fallback copies for older readers are skipped.
 */
export function readWordDocument(bytes: Uint8Array): WordDocument {
  const parts = readParts(bytes, (name) => name === DOCUMENT || name === STYLES || HEADER_FOOTER.test(name));
  const document = parts.get(DOCUMENT);
  if (document === undefined) throw new Error(`it has no ${DOCUMENT}`);
  const styles = readStyles(parts.get(STYLES) ?? "");
  const body = readBody(document, styles);
  const furniture = [...parts]
    .flatMap(([name, xml]) => {
      const match = HEADER_FOOTER.exec(name);
      return match === null ? [] : [{ kind: match[1]!, number: Number(match[2]), xml }];
    })
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.number - b.number);
  const headers = furniture.filter((part) => part.kind === "header").flatMap((part) => furnitureElements(part.xml, styles, "Header"));
  const footers = furniture.filter((part) => part.kind === "footer").flatMap((part) => furnitureElements(part.xml, styles, "Footer"));
  return { text: body.paragraphs.join("\n\n").trim(), elements: [...unique(headers), ...body.elements, ...unique(footers)] };
}

/** A header or footer part's paragraphs as elements of its type; a number alone is a PageNumber (Word's PAGE field, as last shown). */
function furnitureElements(xml: string, styles: Map<string, ParagraphStyle>, type: "Header" | "Footer"): Element[] {
  return readBody(xml, styles).paragraphs.flatMap((text): Element[] => {
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

function readStyles(xml: string): Map<string, ParagraphStyle> {
  const styles = new Map<string, ParagraphStyle>();
  let current: (ParagraphStyle & { id: string }) | undefined;
  scanMarkup(
    xml,
    {
      onopentag(name, attributes) {
        if (name === "w:style") current = { id: attributes.get("w:styleId") ?? "", name: "", numbered: false };
        else if (current === undefined) return;
        else if (name === "w:name") current.name = (attributes.get("w:val") ?? "").toLowerCase();
        else if (name === "w:outlineLvl") current.outlineLevel = Number(attributes.get("w:val"));
        else if (name === "w:numId") current.numbered = attributes.get("w:val") !== "0";
      },
      onclosetag(name) {
        if (name === "w:style" && current !== undefined) styles.set(current.id, current);
        if (name === "w:style") current = undefined;
      },
    },
    { xml: true },
  );
  return styles;
}

interface Paragraph {
  text: string;
  styleId?: string;
  outlineLevel?: number;
  numbered: boolean;
}

/** The paragraphs (in order, table cells' included) and the elements of a WordprocessingML part. */
function readBody(xml: string, styles: Map<string, ParagraphStyle>): { paragraphs: string[]; elements: Element[] } {
  const paragraphs: string[] = [];
  const elements: Element[] = [];
  let paragraph: Paragraph = { text: "", numbered: false };
  let inProperties = false;
  let inText = false;
  let fallbackDepth = 0;
  let tableDepth = 0;
  let rows: string[][] = [];
  let cell: string[] | undefined;

  const endParagraph = () => {
    paragraphs.push(paragraph.text);
    if (tableDepth > 0) cell?.push(paragraph.text);
    else {
      const element = paragraphElement(paragraph, styles);
      if (element !== undefined) elements.push(element);
    }
    paragraph = { text: "", numbered: false };
  };
  scanMarkup(
    xml,
    {
      onopentag(name, attributes) {
        if (name === "mc:Fallback") fallbackDepth++;
        if (fallbackDepth > 0) return;
        switch (name) {
          case "w:pPr":
            inProperties = true;
            break;
          case "w:pStyle":
            if (inProperties) paragraph.styleId = attributes.get("w:val");
            break;
          case "w:outlineLvl":
            if (inProperties) paragraph.outlineLevel = Number(attributes.get("w:val"));
            break;
          case "w:numId":
            if (inProperties) paragraph.numbered = attributes.get("w:val") !== "0";
            break;
          case "w:t":
            inText = true;
            break;
          case "w:tab":
            if (!inProperties) paragraph.text += "\t";
            break;
          case "w:br":
          case "w:cr":
            paragraph.text += "\n";
            break;
          case "w:tbl":
            if (tableDepth === 0) rows = [];
            tableDepth++;
            break;
          case "w:tr":
            if (tableDepth === 1) rows.push([]);
            break;
          case "w:tc":
            if (tableDepth === 1) cell = [];
            break;
        }
      },
      ontext(text) {
        if (inText && fallbackDepth === 0) paragraph.text += text;
      },
      onclosetag(name) {
        if (name === "mc:Fallback") {
          fallbackDepth = Math.max(0, fallbackDepth - 1);
          return;
        }
        if (fallbackDepth > 0) return;
        if (name === "w:pPr") inProperties = false;
        else if (name === "w:t") inText = false;
        else if (name === "w:p") endParagraph();
        else if (name === "w:tc" && tableDepth === 1 && cell !== undefined) {
          rows.at(-1)?.push(cell.join("\n").trim());
          cell = undefined;
        } else if (name === "w:tbl") {
          tableDepth = Math.max(0, tableDepth - 1);
          if (tableDepth === 0) {
            const table = tableElement(rows);
            if (table !== undefined) elements.push(table);
          }
        }
      },
    },
    { xml: true },
  );
  if (paragraph.text !== "") endParagraph();
  return { paragraphs, elements };
}

function paragraphElement(paragraph: Paragraph, styles: Map<string, ParagraphStyle>): Element | undefined {
  const text = paragraph.text.trim();
  if (text === "") return undefined;
  const style = paragraph.styleId === undefined ? undefined : styles.get(paragraph.styleId);
  const name = style?.name ?? paragraph.styleId?.toLowerCase() ?? "";
  const heading = /^heading\s*(\d)$/.exec(name)?.[1];
  if (heading !== undefined) return { type: "Title", text, level: headingLevel(Number(heading)) };
  if (name === "title") return { type: "Title", text, level: 1 };
  const outline = paragraph.outlineLevel ?? style?.outlineLevel;
  if (outline !== undefined && outline >= 0 && outline < 9) return { type: "Title", text, level: headingLevel(outline + 1) };
  if (paragraph.numbered || style?.numbered || /list/.test(name)) return { type: "ListItem", text };
  return classifyText(text, false);
}
