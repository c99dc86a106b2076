import { readParts } from "../zip.ts";
import { MAX_TEXT_BYTES } from "../text.ts";
import { type Element, headingLevel } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { classifyText } from "./plain-text.ts";
import { tableElement } from "./table.ts";

const CONTENT = "content.xml";

/** An OpenDocument text's text (its paragraphs, separated by a blank line) and its elements. */
export interface OpenDocumentText {
  text: string;
  elements: Element[];
}

/**
 * Reads an ODT package's content.xml with scanMarkup (XML), in document order: `text:h` as
 * a Title of its `text:outline-level`, `text:p` as text classified like plain text (a ListItem
 * inside `text:list`), `table:table` as rows of cells (a cell's paragraphs joined), spaces, tabs
 * and line breaks as they are written (`text:s`, `text:tab`, `text:line-break`). Notes, annotations
 * and tracked-change deletions are not the document's text and are skipped.
 */
export function readOpenDocumentText(bytes: Uint8Array): OpenDocumentText {
  const content = readParts(bytes, (name) => name === CONTENT).get(CONTENT);
  if (content === undefined) throw new Error(`it has no ${CONTENT}`);
  const elements: Element[] = [];
  const paragraphs: string[] = [];
  let listDepth = 0;
  let skipDepth = 0;
  /** The spaces `text:s` tags have made so far. */
  let repeatedSpaces = 0;
  /** The paragraph or heading being read, and its level for a heading. */
  let block: { text: string; level?: number } | undefined;
  /** The table being read: its rows, the row and cell being read. */
  let table: { rows: string[][]; row?: string[]; cell?: string[] } | undefined;

  scanMarkup(
    content,
    {
      onopentag(name, attributes) {
        if (skipDepth > 0 || name === "office:annotation" || name === "text:note" || name === "text:tracked-changes") {
          skipDepth++;
          return;
        }
        if (name === "text:list") listDepth++;
        else if (name === "table:table") table = { rows: [] };
        else if (name === "table:table-row" && table) table.row = [];
        else if (name === "table:table-cell" && table) table.cell = [];
        else if (name === "text:h") block = { text: "", level: headingLevel(Number(attributes.get("text:outline-level") ?? 1)) };
        else if (name === "text:p" && block === undefined) block = { text: "" };
        else if (block && name === "text:s") {
          // `text:c` repeats a space up to 1,000 times, and 23 bytes of XML made 1,000 characters:
          // past what the output keeps in all, a `text:s` is one space.
          const count = Math.max(1, Math.min(Number(attributes.get("text:c") ?? 1) || 1, 1000, MAX_TEXT_BYTES - repeatedSpaces));
          repeatedSpaces += count;
          block.text += " ".repeat(count);
        } else if (block && name === "text:tab") block.text += "\t";
        else if (block && name === "text:line-break") block.text += "\n";
      },
      ontext(text) {
        if (skipDepth === 0 && block) block.text += text;
      },
      onclosetag(name) {
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        if (name === "text:list") listDepth--;
        else if ((name === "text:h" || name === "text:p") && block) {
          const { text, level } = block;
          block = undefined;
          if (table?.cell) table.cell.push(text);
          else if (text.trim() !== "") {
            paragraphs.push(text);
            if (level !== undefined) elements.push({ type: "Title", text: text.trim(), level });
            else if (listDepth > 0) elements.push({ type: "ListItem", text: text.trim() });
            else elements.push(classifyText(text, !text.includes("\n")));
          }
        } else if (name === "table:table-cell" && table?.cell && table.row) {
          table.row.push(table.cell.join("\n"));
          table.cell = undefined;
        } else if (name === "table:table-row" && table?.row) {
          table.rows.push(table.row);
          table.row = undefined;
        } else if (name === "table:table" && table) {
          const element = tableElement(table.rows);
          if (element) {
            elements.push(element);
            paragraphs.push(element.text);
          }
          table = undefined;
        }
      },
    },
    { xml: true },
  );
  return { text: paragraphs.join("\n\n"), elements };
}
