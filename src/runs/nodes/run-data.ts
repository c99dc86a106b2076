import type { BoundingBox } from "../../documents/parse/elements/element.ts";
import type { PageText } from "../../documents/parse/ocr-pages.ts";
import { StepError } from "../step-error.ts";

/**
 * The run data: one JSON document per run that its steps read and write. Its `file` (see
 * initialRunData) describes the run's document; every other member is the output of the step of
 * that node id. Its members are in
 * JavaScript's key order: the order the outputs were put in, except that integer-like node ids
 * ("2") come first whatever their order (what needs the order they ran in keeps it apart, see
 * latestParseOutput).
 */
export type RunData = Record<string, unknown>;

/** The run data a run starts with: its document. */
export function initialRunData(file: { name: string; format: string; size: number; sha256: string }): RunData {
  return { file: { name: file.name, format: file.format, size: file.size, sha256: file.sha256 } };
}

/** The run's document, as the nodes see it. */
interface RunDocument {
  name: string;
  format: string;
  contentType: string;
  size: number;
}

/** What every node may use besides its settings and the run data. */
export interface NodeContext {
  document: RunDocument;
  /** A pipe in test mode sends nothing outside: HTTP request and email nodes record what they would send. */
  testMode: boolean;
  /** Aborts the node's work (run cancelled, worker stopping). */
  signal: AbortSignal;
  /** The run's organization: its expressions, patterns and schema checks take its share of the sandbox threads. */
  organizationId: string;
}

/** The parts of a parse node's output that extract and classify read. */
export interface ParsedDocument {
  format: string | undefined;
  pageCount: number;
  /** Each page's text; a document without pages is one page holding all its text. */
  pages: { page: number; text: string }[];
  /** Structured elements, when the parse produced them (type, text, page, and a Table's rows). */
  elements: ParsedElement[];
}

interface ParsedElement {
  type: string;
  text: string;
  page?: number;
  /** `[x0, y0, x1, y1]` from the page's top-left corner, when the parse placed the element. */
  bbox?: BoundingBox;
  table?: { rows: string[][] };
}

interface ParseOutputShape {
  format?: string;
  text?: string;
  pageCount?: number;
  pages?: PageText[];
  elements?: ParsedElement[];
}

function isParseOutput(value: unknown): value is ParseOutputShape {
  return typeof value === "object" && value !== null && ("text" in value || "pages" in value || "elements" in value);
}

/**
 * The parse output a node reads: the one under `source`, or when `source` is empty the first output
 * in the run data's key order that looks like one (see RunData). Undefined when none.
 */
function parsedDocument(runData: RunData, source: string): ParsedDocument | undefined {
  const output = source === "" ? Object.values(runData).find(isParseOutput) : runData[source];
  if (!isParseOutput(output)) return undefined;
  const pages =
    output.pages !== undefined && output.pages.length > 0 ? output.pages.map(({ page, text }) => ({ page, text })) : [{ page: 1, text: output.text ?? "" }];
  return {
    format: output.format,
    pageCount: output.pageCount ?? output.pages?.length ?? 1,
    pages,
    elements: Array.isArray(output.elements) ? output.elements : [],
  };
}

/** The parse output a node reads (see parsedDocument), or `source_missing`. */
export function requireParsedDocument(runData: RunData, source: string): ParsedDocument {
  const document = parsedDocument(runData, source);
  if (document !== undefined) return document;
  throw new StepError("source_missing", source === "" ? "the run has no parse output before this node" : `the run has no parse output "${source}"`);
}
