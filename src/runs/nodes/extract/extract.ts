import { DateOrder as DateOrderEnum, type ExtractField, type ExtractNode, type ExtractTable, FieldType } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { type DateOrder, normalizeValue, type ValueType } from "../normalize.ts";
import { compilePattern, findMatches } from "../../sandbox/patterns.ts";
import { type PatternBudget, patternBudget } from "../../sandbox/pool.ts";
import { type NodeContext, type ParsedDocument, requireParsedDocument, type RunData } from "../run-data.ts";
import { StepError } from "../../step-error.ts";
import { LabelReader } from "./labels.ts";
import type { BoundingBox } from "../../../documents/parse/elements/element.ts";
import { cellUnder, documentRows, type LayoutCell, type LayoutRow, type Region } from "./layout.ts";
import { documentTables, type Table } from "./tables.ts";

/**
 * Where a value was read, for a reviewer: its page and the text it came from; how it was chosen
 * (the label it follows, and whether it stood on the label's line, beside it or below it, in a
 * table's cell or a text line, in the body or a page's margin, or matched the pattern); and the
 * box of its table or text block when the parse gave one.
 */
interface FoundAt {
  page: number;
  text: string;
  by: "pattern" | "label" | "headers";
  label?: string;
  relation?: Relation;
  place?: "cell" | "line";
  region?: Region;
  box?: BoundingBox;
}

/** Where a value stands to its label: on the label's line after it, in the cell beside it, or below it. */
type Relation = "same" | "beside" | "below";

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
  /** Lower ranks are tried first (see RELATION_RANK), then labels in the listed order, then earlier rows, cells and lines. */
  rank: number[];
  value: string;
  found: FoundAt;
  /** A pattern's whole match, placed on its page only when it wins (a page may match many times). */
  match?: string;
}

/** Texts are shown as origins up to this length, so a stray long line does not bloat the output. */
const MAX_ORIGIN_LENGTH = 200;

/** The order places are tried in: the label's line or the cell beside it, then below; the body, then the margins. */
const RELATION_RANK: Record<Relation, number> = { same: 0, beside: 0, below: 1 };
const REGION_RANK: Record<Region, number> = { body: 0, margin: 2 };

/**
 * Types whose values are numbers, dates or amounts: a label heading a column of several such
 * values heads a column and is no field's label, and such a value does not start with a word.
 */
const COLUMN_TYPES: ReadonlySet<ValueType> = new Set(["number", "date", "money"]);

/** What one label search needs: the document's rows, the field's type, and the node's labels (no value is one of them). */
interface LabelSearch {
  rows: readonly LayoutRow[];
  type: ValueType;
  options: { dateOrder: DateOrder; currency: string | undefined };
  labels: LabelReader;
}

/** The cell under `row`'s cell `index` in the next row, its index there and its first line, if any. */
function cellBelow(row: LayoutRow, index: number): { row: LayoutRow; cell: LayoutCell; index: number; text: string } | undefined {
  const below = row.below;
  if (below === undefined) return undefined;
  const under = cellUnder(row.cells[index]!, index, below);
  const underCell = below.cells[under];
  const text = underCell?.lines.find((line) => line !== "");
  return underCell === undefined || text === undefined ? undefined : { row: below, cell: underCell, index: under, text };
}

/** Whether a label in `row`'s cell `index` heads a column: two or more values of the field's type below it. */
function headsColumn(row: LayoutRow, index: number, search: LabelSearch): boolean {
  if (!COLUMN_TYPES.has(search.type)) return false;
  let values = 0;
  let below = cellBelow(row, index);
  for (let depth = 0; depth < 3 && below !== undefined && !search.labels.isLabel(below.text); depth++) {
    if (normalizeValue(below.text, search.type, search.options) !== undefined) values++;
    below = cellBelow(below.row, below.index);
  }
  return values >= 2;
}

/**
 * The places a label's value may be, in one reading model for tables and text lines alike: a row
 * is a table's row or a text line split into its columns, a cell holds lines. Where a cell's line
 * starts with the label (as the whole of its label part), the value is the rest of that line, or
 * the same line of the next cell in the row (beside), or, when the label ends its line, the next
 * line of its cell or the cell under it in the next row (below). A value is a line, never the
 * rest of a cell; a text that is itself a label is never a value; a label heading a column of
 * values (a line items table's "Total") is skipped.
 */
function labelCandidates(search: LabelSearch, label: string, labelIndex: number, candidates: Candidate[]): void {
  search.rows.forEach((labelRow, rowIndex) => {
    labelRow.cells.forEach((cell, index) => {
      cell.lines.forEach((line, lineIndex) => {
        const match = search.labels.match(line, label, COLUMN_TYPES.has(search.type));
        if (match === undefined) return;
        const add = (relation: Relation, row: LayoutRow, valueCell: LayoutCell | undefined, text: string, origin: string) => {
          // A value beside or below a label runs to the end of its line, or to the next label on it.
          if (search.labels.isLabel(text)) return;
          const value = relation === "same" ? text : search.labels.valueText(text);
          if (value === "" || search.labels.isLabel(value)) return;
          const box = valueCell?.box ?? row.box;
          candidates.push({
            rank: [REGION_RANK[labelRow.region] + RELATION_RANK[relation], labelIndex, rowIndex, index, lineIndex],
            value: relation === "same" || match.currency === undefined ? value : `${value} ${match.currency}`,
            found: {
              page: row.page,
              text: clip(origin),
              by: "label",
              label,
              relation,
              place: row.place,
              region: labelRow.region,
              ...(box === undefined ? {} : { box }),
            },
          });
        };
        if (!match.endsLine) {
          add("same", labelRow, cell, match.rest, line);
          return;
        }
        if (headsColumn(labelRow, index, search)) return;
        const beside = labelRow.cells[index + 1];
        const besideLine = beside?.lines[cell.lines.length > 1 ? lineIndex : 0] ?? "";
        add("beside", labelRow, beside, besideLine, `${line} | ${besideLine}`);
        const nextLine = cell.lines.slice(lineIndex + 1).find((text) => text !== "");
        const below = nextLine === undefined ? cellBelow(labelRow, index) : { row: labelRow, cell, text: nextLine };
        if (below !== undefined) add("below", below.row, below.cell, below.text, `${line} / ${below.text}`);
      });
    });
  });
}

/** Candidates in the order they are tried: by rank, then label, row, cell and line. */
function byRank(a: Candidate, b: Candidate): number {
  for (let index = 0; index < a.rank.length; index++) {
    const difference = a.rank[index]! - b.rank[index]!;
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * The box of the smallest placed element on `page` whose text holds `text`: where a pattern's
 * match stands when the parse placed its elements (a PDF's lines, an OCR'd page's paragraphs).
 * A match across two elements has none.
 */
function boxHolding(document: ParsedDocument, page: number, text: string): BoundingBox | undefined {
  let smallest: { box: BoundingBox; area: number } | undefined;
  for (const element of document.elements) {
    if (element.bbox === undefined || (element.page ?? 1) !== page || !element.text.includes(text)) continue;
    const [x0, y0, x1, y1] = element.bbox;
    const area = (x1 - x0) * (y1 - y0);
    if (smallest === undefined || area < smallest.area) smallest = { box: element.bbox, area };
  }
  return smallest?.box;
}

async function patternCandidates(document: ParsedDocument, field: ExtractField, path: string, budget: PatternBudget): Promise<Candidate[]> {
  const pattern = compilePattern(field.pattern, `${path}.pattern`);
  const candidates: Candidate[] = [];
  for (const { page, text } of document.pages) {
    for (const { groups } of await findMatches(pattern, text, `${path}.pattern`, budget)) {
      candidates.push({
        rank: [],
        value: groups.slice(1).find((group) => group !== undefined) ?? groups[0]!,
        found: { page, text: clip(groups[0]!), by: "pattern" },
        match: groups[0]!,
      });
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

/** Everything a field's search reads, made once per step. */
interface DocumentView {
  document: ParsedDocument;
  rows: readonly LayoutRow[];
  /** The node's labels: each line's words read once, and no value is one of them. */
  labels: LabelReader;
}

async function findField(view: DocumentView, field: ExtractField, path: string, dateOrder: DateOrder, budget: PatternBudget) {
  const type = VALUE_TYPES[field.type] ?? "string";
  const options = { dateOrder, currency: currencyOption(field.currency) };
  const candidates = field.pattern === "" ? [] : await patternCandidates(view.document, field, path, budget);
  const byLabel: Candidate[] = [];
  const search: LabelSearch = { rows: view.rows, type, options, labels: view.labels };
  field.labels.forEach((label, index) => {
    labelCandidates(search, label, index, byLabel);
  });
  candidates.push(...byLabel.sort(byRank));
  for (const { value: text, found, match } of candidates) {
    const value = normalizeValue(text, type, options);
    if (value === undefined) continue;
    const box = match === undefined ? undefined : boxHolding(view.document, found.page, match);
    return { value, found: box === undefined ? found : { ...found, box } };
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
  const found: FoundAt = { page: table.page, text: clip(header!.join(" | ")), by: "headers", ...(table.box === undefined ? {} : { box: table.box }) };
  return { value: rows, found };
}

/**
 * Reads the node's fields and tables out of the parse output the node names. Each field is looked
 * for by its pattern, then by its labels in one reading order (labelCandidates, byRank); the first
 * text that holds a value of the field's type wins. Throws `extract_missing_fields` when a required
 * one is missing unless the node continues on missing fields.
 */
export async function runExtract(node: ExtractNode, runData: RunData, context: NodeContext, path = "extract"): Promise<ExtractOutput> {
  const document = requireParsedDocument(runData, node.source);
  const dateOrder = DATE_ORDERS[node.dateOrder] ?? "dmy";
  const tables = documentTables(document);
  const view: DocumentView = {
    document,
    rows: documentRows(document),
    labels: new LabelReader(node.fields.flatMap((field) => field.labels)),
  };
  const output: ExtractOutput = { fields: {}, missing: [], found: {} };
  const budget = patternBudget(context);
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
    keep(field.name, field.required, await findField(view, field, `${path}.fields[${index}]`, dateOrder, budget));
  for (const table of node.tables) keep(table.name, table.required, readTable(tables, table, dateOrder));
  if (requiredMissing.length > 0 && !node.continueOnMissing) {
    throw new StepError("extract_missing_fields", `required fields not found: ${requiredMissing.join(", ")}`, { missing: requiredMissing });
  }
  return output;
}
