import { insertAt } from "../../arrays.ts";
import { readParts } from "../zip.ts";
import { MAX_TEXT_BYTES } from "../text.ts";
import { type Element, headingLevel } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { classifyText } from "./plain-text.ts";
import { tableElement } from "./table.ts";

const CONTENT = "content.xml";
/** Paragraphs nested in paragraphs (a frame's text box in a paragraph) that are read apart; deeper ones join the paragraph holding them. */
const MAX_NESTED_BLOCKS = 8;

/** A paragraph or heading being read. */
interface Block {
  text: string;
  /** A heading's level. */
  level: number | undefined;
  /** Where it goes in the paragraphs, the elements and its cell: before what the paragraphs nested in it added. */
  paragraphAt: number;
  elementAt: number;
  cellAt: number;
}

/** An OpenDocument text's text (its paragraphs, separated by a blank line) and its elements. */
export interface OpenDocumentText {
  text: string;
  elements: Element[];
}

/**
 * Reads an ODT package's content.xml with scanMarkup (XML), in document order: `text:h` as
 * a Title of its `text:outline-level`, `text:p` as text classified like plain text (a ListItem
 * inside `text:list`; a frame's paragraphs, nested in the paragraph it is anchored in, after that
 * paragraph), `table:table` as rows of cells (a cell's paragraphs joined, a table nested in it
 * included), spaces, tabs
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
  /** The paragraph or heading being read. */
  let block: Block | undefined;
  /** The paragraphs holding it: a frame (a text box, a captioned figure) sits in the paragraph it is anchored in. */
  const holders: Block[] = [];
  /** The paragraphs past MAX_NESTED_BLOCKS still open: their text is the block's. */
  let flattened = 0;
  /** The table being read: its rows, the row and cell being read. */
  let table: { rows: string[][]; row?: string[]; cell?: string[] } | undefined;
  /** Tables open: a table in a cell is read as its paragraphs, part of that cell's text (as DOCX reads one). */
  let tableDepth = 0;

  const startBlock = (level: number | undefined) => {
    if (block !== undefined && holders.length >= MAX_NESTED_BLOCKS) flattened++;
    else {
      if (block !== undefined) holders.push(block);
      block = { text: "", level, paragraphAt: paragraphs.length, elementAt: elements.length, cellAt: table?.cell?.length ?? 0 };
    }
  };
  // A paragraph goes before the paragraphs nested in it, which ended first; the one holding it is then read on.
  const endBlock = ({ text, level, paragraphAt, elementAt, cellAt }: Block) => {
    block = holders.pop();
    if (table?.cell) insertAt(table.cell, cellAt, text);
    else if (text.trim() !== "") {
      insertAt(paragraphs, paragraphAt, text);
      if (level !== undefined) insertAt(elements, elementAt, { type: "Title", text: text.trim(), level });
      else if (listDepth > 0) insertAt(elements, elementAt, { type: "ListItem", text: text.trim() });
      else insertAt(elements, elementAt, classifyText(text, !text.includes("\n")));
    }
  };

  scanMarkup(
    content,
    {
      onopentag(name, attributes) {
        if (skipDepth > 0 || name === "office:annotation" || name === "text:note" || name === "text:tracked-changes") {
          skipDepth++;
          return;
        }
        if (name === "text:list") listDepth++;
        else if (name === "table:table") {
          if (tableDepth++ === 0) table = { rows: [] };
        } else if (name === "table:table-row" && table && tableDepth === 1) table.row = [];
        else if (name === "table:table-cell" && table && tableDepth === 1) table.cell = [];
        else if (name === "text:h") startBlock(headingLevel(Number(attributes.get("text:outline-level") ?? 1)));
        else if (name === "text:p") startBlock(undefined);
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
          if (flattened === 0) endBlock(block);
          else {
            flattened--;
            block.text += "\n";
          }
        } else if (tableDepth !== 1) {
          // Outside a table, or in a table nested in a cell: its rows and cells are not the table's.
          if (name === "table:table") tableDepth = Math.max(0, tableDepth - 1);
        } else if (name === "table:table-cell" && table?.cell && table.row) {
          table.row.push(table.cell.join("\n"));
          table.cell = undefined;
        } else if (name === "table:table-row" && table?.row) {
          table.rows.push(table.row);
          table.row = undefined;
        } else if (name === "table:table" && table) {
          tableDepth = 0;
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
