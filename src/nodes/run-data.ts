import type { BoundingBox } from "../parse/elements/element.ts";
import type { PageText } from "../parse/ocr-pages.ts";
import { StepError } from "./step-error.ts";

/** What a run has produced so far: each completed node's output under its node id. */
export type RunData = Record<string, unknown>;

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
 * in the run data that looks like one (run data keeps nodes in the order they ran). Undefined when none.
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
