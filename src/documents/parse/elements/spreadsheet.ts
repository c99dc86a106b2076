import { MAX_TEXT_BYTES } from "../text.ts";
import type { Element } from "./element.ts";
import { scanMarkup } from "./markup.ts";
import { type CellDates, type DateFormat, dateText } from "./spreadsheet-dates.ts";
import { TableBudget } from "./table.ts";

/** Sheets of a workbook read for elements at most (an XLSX's, an ODS's); their names are all listed. */
export const MAX_SHEETS_READ = 1000;

/** Cells read per sheet at most: the elements are bounded anyway, and a crafted sheet with millions of cells stays cheap. */
const MAX_SHEET_CELLS = 200_000;

/**
 * A worksheet's used range as rows of cell texts: shared strings resolved, booleans as TRUE and
 * FALSE, numbers as written but those whose style shows a date, which are ISO 8601 dates and times
 * (see dateText). Rows without values are left out, and so are empty columns when the range is
 * mostly empty (a stray cell at XFD1048576 makes no million-row grid).
 */
export function sheetRows(xml: string, sharedStrings: readonly string[], dates: CellDates): string[][] {
  const cells = new Map<number, Map<number, string>>();
  let count = 0;
  let cell: Cell | undefined;
  let inValue = false;
  let nextRow = 0;
  let nextColumn = 0;
  scanMarkup(
    xml,
    {
      onopentag(name, attributes) {
        const local = name.replace(/^\w+:/, "");
        if (local === "row") {
          const number = attributes.get("r");
          nextRow = number === undefined ? nextRow + 1 : Number(number);
          nextColumn = 0;
        } else if (local === "c" && count < MAX_SHEET_CELLS) {
          const at = attributes.get("r");
          const reference = at === undefined ? undefined : cellReference(at);
          nextColumn = reference?.column ?? nextColumn + 1;
          const format = dates.styles[Number(attributes.get("s") ?? 0)];
          cell = { row: reference?.row ?? nextRow, column: nextColumn, type: attributes.get("t") ?? "n", format, value: "" };
        } else if (local === "v" || (local === "t" && cell?.type === "inlineStr")) inValue = true;
        else if (local === "rPh") inValue = false;
      },
      ontext(text) {
        if (inValue && cell !== undefined) cell.value += text;
      },
      onclosetag(name) {
        const local = name.replace(/^\w+:/, "");
        if (local === "v" || local === "t") inValue = false;
        else if (local === "c" && cell !== undefined) {
          const text = cellText(cell, sharedStrings, dates.date1904);
          if (text !== "") {
            const row = cells.get(cell.row) ?? new Map<number, string>();
            cells.set(cell.row, row.set(cell.column, text));
            count++;
          }
          cell = undefined;
        }
      },
    },
    { xml: true },
  );
  const used = [...new Set([...cells.values()].flatMap((row) => [...row.keys()]))].sort((a, b) => a - b);
  if (used.length === 0) return [];
  const first = used[0]!;
  const last = used.at(-1)!;
  const columns = last - first + 1 > used.length * 2 ? used : Array.from({ length: last - first + 1 }, (_, index) => first + index);
  // As tableElement bounds a table: each row's text is at least a tab per column, so the rows past
  // MAX_TEXT_BYTES / width change nothing (the table is dropped whole). A diagonal of 16,000 cells
  // otherwise made a 16,000 x 16,000 grid: 10 s and 1.6 GB.
  const rows = [...cells.keys()].sort((a, b) => a - b).slice(0, Math.floor(MAX_TEXT_BYTES / columns.length) + 2);
  return rows.map((row) => columns.map((column) => cells.get(row)!.get(column) ?? ""));
}

/** A worksheet read: its number in the workbook (1-based), its name and its rows. */
export interface Sheet {
  number: number;
  name: string;
  rows: string[][];
}

/**
 * The sheets of a workbook as elements: a Title with the sheet's name, then a Table of its used
 * range (page = the sheet's number); tables stop being built once they hold the text the output
 * keeps, all sheets together (TableBudget).
 */
export function workbookElements(sheets: readonly Sheet[]): Element[] {
  const tables = new TableBudget();
  return sheets.flatMap(({ number, name, rows }): Element[] => {
    const table = tables.table(rows, { page: number, sheet: name });
    return [{ type: "Title", text: name, level: 1, page: number }, ...(table === undefined ? [] : [table])];
  });
}

/** A cell being read: where it is, its type (`t`), its style's date format, and its value as written. */
interface Cell {
  row: number;
  column: number;
  type: string;
  format: DateFormat | undefined;
  value: string;
}

function cellText({ type, format, value }: Cell, sharedStrings: readonly string[], date1904: boolean): string {
  if (type === "s") return sharedStrings[Number(value)] ?? "";
  if (type === "b") return value === "1" ? "TRUE" : value === "0" ? "FALSE" : value;
  if (type === "n" && format !== undefined && value.trim() !== "") return dateText(Number(value), format, date1904) ?? value;
  return value.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** "B12" -> row 12, column 2. */
function cellReference(reference: string): { row: number; column: number } | undefined {
  const match = /^\$?([A-Z]{1,3})\$?(\d+)$/i.exec(reference);
  if (match === null) return undefined;
  let column = 0;
  for (const letter of match[1]!.toUpperCase()) column = column * 26 + letter.charCodeAt(0) - 64;
  return { row: Number(match[2]), column };
}
