import { LRUCache } from "lru-cache";
import { DateOrder as DateOrderEnum, type ExtractField, type ExtractNode, type ExtractTable, FieldType } from "../../../gen/docpipe/v1/pipe_pb.js";
import { type DateOrder, normalizeValue, type ValueType } from "../normalize.ts";
import { compilePattern, findMatches, type PatternBudget, patternBudget } from "../patterns.ts";
import { type NodeContext, type ParsedDocument, requireParsedDocument, type RunData } from "../run-data.ts";
import { StepError } from "../step-error.ts";
import { documentTables, lineCells, type Table } from "./tables.ts";

/** Where a value was read: its page and the text it came from, for a reviewer. */
interface FoundAt {
  page: number;
  text: string;
}

export interface ExtractOutput {
  fields: Record<string, unknown>;
  /** Fields and tables not found, required or not, in the order the node lists them. */
  missing: string[];
  found: Record<string, FoundAt>;
}

const VALUE_TYPES: Record<FieldType, ValueType> = {
  [FieldType.UNSPECIFIED]: "string",
  [FieldType.STRING]: "string",
  [FieldType.NUMBER]: "number",
  [FieldType.DATE]: "date",
  [FieldType.MONEY]: "money",
  [FieldType.BOOLEAN]: "boolean",
};

const DATE_ORDERS: Record<DateOrderEnum, DateOrder> = {
  [DateOrderEnum.UNSPECIFIED]: "dmy",
  [DateOrderEnum.DMY]: "dmy",
  [DateOrderEnum.MDY]: "mdy",
  [DateOrderEnum.YMD]: "ymd",
};

/** Text that may hold a field's value, and where it was. */
interface Candidate {
  page: number;
  /** The text shown as the value's origin. */
  origin: string;
  value: string;
}

/** Texts are shown as origins up to this length, so a stray long line does not bloat the output. */
const MAX_ORIGIN_LENGTH = 200;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Label patterns by label: a pipe's labels compile once per process, not once per run (they keep no state: not global). */
const labelPatterns = new LRUCache<string, RegExp>({ max: 500 });

/** A label found as a whole word or phrase, any run of space matching its spaces, then an optional ":", "#" or "." */
function labelPattern(label: string): RegExp {
  const known = labelPatterns.get(label);
  if (known !== undefined) return known;
  const words = label.trim().split(/\s+/).map(escapeRegExp).join("\\s+");
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${words}(?![\\p{L}\\p{N}])\\s*[:#.]?`, "iu");
  labelPatterns.set(label, pattern);
  return pattern;
}

/** Values beside or below a label in a table's cells. */
function tableCandidates(tables: readonly Table[], label: RegExp): Candidate[] {
  const candidates: Candidate[] = [];
  for (const { page, rows } of tables) {
    rows.forEach((row, r) => {
      row.forEach((cell, c) => {
        const match = label.exec(cell);
        if (match === null || match.index !== 0) return;
        const rest = cell.slice(match[0].length).trim();
        if (rest !== "") candidates.push({ page, origin: cell, value: rest });
        const beside = row[c + 1];
        const below = rows[r + 1]?.[c];
        const besideCandidate = beside === undefined || beside === "" ? [] : [{ page, origin: `${cell} | ${beside}`, value: beside }];
        const belowCandidate = below === undefined || below === "" ? [] : [{ page, origin: `${cell} / ${below}`, value: below }];
        // A label in the header row heads a column: its value is below; elsewhere it is beside.
        candidates.push(...(r === 0 ? [...belowCandidate, ...besideCandidate] : [...besideCandidate, ...belowCandidate]));
      });
    });
  }
  return candidates;
}

/**
 * Values after a label in the text: the rest of its line (its first cell, then all of it), or when
 * the label ends its line, the cell below it in the next line's columns, or the next line.
 */
function textCandidates(document: ParsedDocument, label: RegExp): Candidate[] {
  const candidates: Candidate[] = [];
  for (const { page, text } of document.pages) {
    const lines = text.split("\n");
    const following = nextNonBlank(lines);
    lines.forEach((line, index) => {
      const match = label.exec(line);
      if (match === null) return;
      const rest = line.slice(match.index + match[0].length);
      const cells = lineCells(rest);
      if (cells.length > 0) {
        candidates.push({ page, origin: line.trim(), value: cells[0]! });
        if (cells.length > 1) candidates.push({ page, origin: line.trim(), value: rest.trim() });
        return;
      }
      const next = lines[following[index]!];
      if (next === undefined) return;
      const labelCells = lineCells(line);
      const column = lineCells(line.slice(0, match.index)).length;
      const nextCells = lineCells(next);
      if (labelCells.length >= 2 && nextCells.length === labelCells.length) {
        candidates.push({ page, origin: `${line.trim()} / ${next.trim()}`, value: nextCells[column]! });
      }
      candidates.push({ page, origin: `${line.trim()} / ${next.trim()}`, value: next.trim() });
    });
  }
  return candidates;
}

/** For each line, the index of the first non-blank line after it (lines.length when none): one backward pass. */
function nextNonBlank(lines: readonly string[]): Int32Array {
  const next = new Int32Array(lines.length);
  let after = lines.length;
  for (let index = lines.length - 1; index >= 0; index--) {
    next[index] = after;
    if (lines[index]!.trim() !== "") after = index;
  }
  return next;
}

async function patternCandidates(document: ParsedDocument, field: ExtractField, path: string, budget: PatternBudget): Promise<Candidate[]> {
  const pattern = compilePattern(field.pattern, `${path}.pattern`);
  const candidates: Candidate[] = [];
  for (const { page, text } of document.pages) {
    for (const { groups } of await findMatches(pattern, text, `${path}.pattern`, budget)) {
      candidates.push({ page, origin: groups[0]!, value: groups.slice(1).find((group) => group !== undefined) ?? groups[0]! });
    }
  }
  return candidates;
}

/**
 * A value a reviewer typed for an extract field, normalized as the step normalizes what it finds
 * ("3" for a number field is 3); undefined when the text is no value of the field's type. Text of a
 * string field is kept as typed.
 */
export function typedFieldValue(node: ExtractNode, field: ExtractField, text: string): unknown {
  const type = VALUE_TYPES[field.type] ?? "string";
  if (type === "string") return text;
  return normalizeValue(text, type, { dateOrder: DATE_ORDERS[node.dateOrder] ?? "dmy", currency: currencyOption(field.currency) });
}

/** A field's or table's currency setting: its ISO code, upper case, or none. */
function currencyOption(currency: string): string | undefined {
  return currency === "" ? undefined : currency.toUpperCase();
}

function clip(text: string): string {
  return text.length > MAX_ORIGIN_LENGTH ? `${text.slice(0, MAX_ORIGIN_LENGTH)}…` : text;
}

async function findField(document: ParsedDocument, tables: readonly Table[], field: ExtractField, path: string, dateOrder: DateOrder, budget: PatternBudget) {
  const type = VALUE_TYPES[field.type] ?? "string";
  const options = { dateOrder, currency: currencyOption(field.currency) };
  const sources: (() => Candidate[] | Promise<Candidate[]>)[] = [];
  if (field.pattern !== "") sources.push(() => patternCandidates(document, field, path, budget));
  for (const label of field.labels) {
    const pattern = labelPattern(label);
    sources.push(
      () => tableCandidates(tables, pattern),
      () => textCandidates(document, pattern),
    );
  }
  for (const source of sources) {
    for (const candidate of await source()) {
      const value = normalizeValue(candidate.value, type, options);
      if (value !== undefined) return { value, found: { page: candidate.page, text: clip(candidate.origin) } };
    }
  }
  return undefined;
}

function sameHeader(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/** The first table whose header row has all the wanted headers, as rows of objects keyed by the header. */
function readTable(tables: readonly Table[], wanted: ExtractTable, dateOrder: DateOrder) {
  const table = tables.find(({ rows }) => wanted.headers.every((header) => rows[0]!.some((cell) => sameHeader(cell, header))));
  if (table === undefined) return undefined;
  const [header, ...body] = table.rows;
  const types = Object.entries(wanted.columnTypes);
  const options = { dateOrder, currency: currencyOption(wanted.currency) };
  const columnType = (name: string): ValueType => VALUE_TYPES[types.find(([column]) => sameHeader(column, name))?.[1] ?? FieldType.STRING] ?? "string";
  const rows = body
    .filter((row) => row.some((cell) => cell !== ""))
    .map((row) =>
      Object.fromEntries(
        header!.map((name, index) => {
          const cell = row[index] ?? "";
          const value = normalizeValue(cell, columnType(name), options);
          return [name, value ?? (cell === "" ? null : cell)];
        }),
      ),
    );
  return { value: rows, found: { page: table.page, text: clip(header!.join(" | ")) } };
}

/**
 * Reads the node's fields and tables out of the parse output the node names. Each field is looked
 * for by its pattern, then by each label (in a table, then in the text); the first text that holds
 * a value of the field's type wins. Throws `extract_missing_fields` when a required one is missing
 * unless the node continues on missing fields.
 */
export async function runExtract(node: ExtractNode, runData: RunData, context: NodeContext, path = "extract"): Promise<ExtractOutput> {
  const document = requireParsedDocument(runData, node.source);
  const dateOrder = DATE_ORDERS[node.dateOrder] ?? "dmy";
  const tables = documentTables(document);
  const output: ExtractOutput = { fields: {}, missing: [], found: {} };
  const budget = patternBudget(context.signal);
  const requiredMissing: string[] = [];
  const keep = (name: string, required: boolean, result: { value: unknown; found: FoundAt } | undefined) => {
    if (result === undefined) {
      output.missing.push(name);
      if (required) requiredMissing.push(name);
      return;
    }
    output.fields[name] = result.value;
    output.found[name] = result.found;
  };
  for (const [index, field] of node.fields.entries())
    keep(field.name, field.required, await findField(document, tables, field, `${path}.fields[${index}]`, dateOrder, budget));
  for (const table of node.tables) keep(table.name, table.required, readTable(tables, table, dateOrder));
  if (requiredMissing.length > 0 && !node.continueOnMissing) {
    throw new StepError("extract_missing_fields", `required fields not found: ${requiredMissing.join(", ")}`, { missing: requiredMissing });
  }
  return output;
}
