import { MAX_TEXT_BYTES } from "../text.ts";
import type { Element } from "./element.ts";
import { tableElement } from "./table.ts";

/**
 * The records of RFC 4180 CSV (quoted fields may hold commas, quotes and newlines), read until their
 * fields pass `maxChars` characters together: a table's text and HTML must fit the output budget,
 * and a large file is not held twice in memory as cells.
 */
function csvRows(text: string, maxChars = MAX_TEXT_BYTES / 2): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let chars = 0;
  const endField = () => {
    row.push(field);
    chars += field.length + 1;
    field = "";
  };
  const endRow = () => {
    endField();
    if (row.length > 1 || row[0] !== "") rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length && chars <= maxChars; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === "") quoted = true;
    else if (char === ",") endField();
    else if (char === "\n") endRow();
    else if (char !== "\r") field += char;
  }
  if (field !== "" || row.length > 0) endRow();
  return rows;
}

/** A CSV file's elements: one Table of its records (the first is its header row). */
export function csvElements(text: string): Element[] {
  const table = tableElement(csvRows(text));
  return table === undefined ? [] : [table];
}
