import { insertAt } from "../../../platform/arrays.ts";
import { readParts } from "../zip.ts";
import { MAX_TEXT_BYTES } from "../text.ts";
import { type Element, headingLevel } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { classifyText } from "./plain-text.ts";
import { MAX_SHEETS_READ } from "./spreadsheet.ts";
import { MAX_SPANNED_CELLS, TableBudget } from "./table.ts";

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

/** A table being read: its rows, the row and cell being read. */
interface TableRead {
  rows: string[][];
  row?: string[];
  /** The row's `table:number-rows-repeated`: the times it appears. */
  rowRepeat: number;
  cell?: string[];
  /** The cell's `table:number-columns-repeated`: the columns it fills. */
  cellRepeat: number;
  /** Whether the cell is a `table:covered-table-cell`, under a merged cell: an empty cell, its text hidden as the application hides it. */
  covered: boolean;
  /**
   * The row's empty cells not placed yet: the columns they fill, and how many are written. They
   * are placed before the next cell with text, else dropped: a spreadsheet fills each row to its
   * last column with one empty cell repeated thousands of times.
   */
  emptyColumns: number;
  emptyWritten: number;
}

/** A `table:number-columns-repeated` or `table:number-rows-repeated`: 1 when absent or not a count. */
function repeats(value: string | undefined): number {
  const count = Math.floor(Number(value ?? 1));
  return count >= 1 ? count : 1;
}

/** Adds `count` copies of `item` to `items`. */
function pushCopies<T>(items: T[], item: T, count: number): void {
  for (let index = 0; index < count; index++) items.push(item);
}

/** An OpenDocument text's or spreadsheet's text (its paragraphs and tables, separated by a blank line) and its elements. */
export interface OpenDocumentText {
  text: string;
  elements: Element[];
  /** A spreadsheet's sheets by name, every one in order; none for a text. */
  sheetNames: string[];
}

/**
 * Reads an ODT package's content.xml with scanMarkup (XML), in document order: `text:h` as
 * a Title of its `text:outline-level`, `text:p` as text classified like plain text (a ListItem
 * inside `text:list`; a frame's paragraphs, nested in the paragraph it is anchored in, after that
 * paragraph), `table:table` as rows of cells (a cell's paragraphs joined, a table nested in it
 * included; repeated cells and rows as often as they repeat, within a budget; a covered cell, under
 * a merged one, empty), spaces, tabs
 * and line breaks as they are written (`text:s`, `text:tab`, `text:line-break`). Notes, annotations
 * and tracked-change deletions are not the document's text and are skipped. In a spreadsheet (an
 * ODS, `kind` "spreadsheet") each top-level table is a sheet: a Title of its `table:name` (page: the
 * sheet's number), then a Table of its cells, as an XLSX's sheets are; the first MAX_SHEETS_READ
 * are read, the rest only named. Tables stop being built once they hold the text the output keeps
 * (TableBudget).
 */
export function readOpenDocumentText(bytes: Uint8Array, kind: "text" | "spreadsheet" = "text"): OpenDocumentText {
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
  let table: TableRead | undefined;
  const sheetNames: string[] = [];
  const tables = new TableBudget();
  /** Tables open: a table in a cell is read as its paragraphs, part of that cell's text (as DOCX reads one). */
  let tableDepth = 0;
  /** What is left of MAX_SPANNED_CELLS: the cells repeats add, all tables together. */
  let repeatBudget = MAX_SPANNED_CELLS;
  /**
   * What is left of MAX_TEXT_BYTES for the characters repeats copy, all tables together: a row of
   * one long cell repeated a million times is few cells but gigabytes of text, and the output keeps
   * no more than MAX_TEXT_BYTES of text anyway.
   */
  let repeatTextBudget = MAX_TEXT_BYTES;

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

  // How many of `count` copies of `size` cells and `characters` of text each (`written` of them
  // written in the file) are placed: all while the cells and text the file does not write fit the
  // budgets, else those written (each costs the file its bytes), so that a row of 16,384 cells
  // repeated 1,048,576 times is one row, and so is a row of one long cell repeated as often.
  const copies = (count: number, written: number, size: number, characters: number) => {
    const added = (count - written) * size;
    const addedText = (count - written) * characters;
    if (!(added <= repeatBudget && addedText <= repeatTextBudget)) return written;
    repeatBudget -= added;
    repeatTextBudget -= addedText;
    return count;
  };
  const endCell = (current: TableRead, row: string[]) => {
    const text = current.covered ? "" : current.cell!.join("\n");
    if (text.trim() === "") {
      current.emptyColumns += current.cellRepeat;
      current.emptyWritten++;
      return;
    }
    pushCopies(row, "", copies(current.emptyColumns, current.emptyWritten, 1, 0));
    current.emptyColumns = current.emptyWritten = 0;
    pushCopies(row, text, copies(current.cellRepeat, 1, 1, text.length));
  };
  // A row without text is left out of the table (as tableElement leaves it out), however often it repeats.
  const endRow = (current: TableRead, row: string[]) => {
    if (row.length === 0) return;
    const characters = row.reduce((sum, cell) => sum + cell.length, 0);
    pushCopies(current.rows, row, copies(current.rowRepeat, 1, row.length, characters));
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
          if (kind === "spreadsheet" && tableDepth === 0) {
            const sheet = sheetNames.push(attributes.get("table:name") ?? "");
            // A sheet past those read is named, and its content skipped as a note's is.
            if (sheet > MAX_SHEETS_READ) {
              skipDepth++;
              return;
            }
            elements.push({ type: "Title", text: sheetNames[sheet - 1]!, level: 1, page: sheet });
          }
          if (tableDepth++ === 0) table = { rows: [], rowRepeat: 1, cellRepeat: 1, covered: false, emptyColumns: 0, emptyWritten: 0 };
        } else if (name === "table:table-row" && table && tableDepth === 1) {
          table.row = [];
          table.rowRepeat = repeats(attributes.get("table:number-rows-repeated"));
          table.emptyColumns = table.emptyWritten = 0;
        } else if ((name === "table:table-cell" || name === "table:covered-table-cell") && table && tableDepth === 1) {
          table.cell = [];
          table.cellRepeat = repeats(attributes.get("table:number-columns-repeated"));
          table.covered = name === "table:covered-table-cell";
        } else if (name === "text:h") startBlock(headingLevel(Number(attributes.get("text:outline-level") ?? 1)));
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
        } else if ((name === "table:table-cell" || name === "table:covered-table-cell") && table?.cell && table.row) {
          endCell(table, table.row);
          table.cell = undefined;
        } else if (name === "table:table-row" && table?.row) {
          endRow(table, table.row);
          table.row = undefined;
        } else if (name === "table:table" && table) {
          tableDepth = 0;
          const sheet = kind === "spreadsheet" ? { page: sheetNames.length, sheet: sheetNames.at(-1)! } : {};
          const element = tables.table(table.rows, sheet);
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
  return { text: paragraphs.join("\n\n"), elements, sheetNames };
}
