import type { Row } from "../authenticate-key.ts";

/** A figure with the bound it must meet, if the issue sets one. */
export interface BenchRow extends Row {
  target?: { op: ">=" | "<="; value: number };
}

/** What a bench module hands back: its rows, and markdown sections for the README (profiles, notes). */
export interface BenchResult {
  rows: BenchRow[];
  sections: string[];
}

export function verdict(row: BenchRow): string {
  if (row.target === undefined) return "";
  const { op, value } = row.target;
  const met = op === ">=" ? row.value >= value : row.value <= value;
  return met ? "pass" : "FAIL";
}

function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  return Number.isInteger(value) ? value.toLocaleString("en-US") : value.toLocaleString("en-US", { maximumSignificantDigits: 3 });
}

export function markdownTable(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map(() => "---")), ...rows.map(line)].join("\n");
}

export function resultsTable(rows: BenchRow[]): string {
  return markdownTable(
    ["name", "value", "unit", "target", "verdict"],
    rows.map((row) => [
      row.name,
      formatValue(row.value),
      row.unit,
      row.target === undefined ? "" : `${row.target.op} ${formatValue(row.target.value)}`,
      verdict(row),
    ]),
  );
}

export const KIB = 1024;
export const MIB = 1024 * 1024;
