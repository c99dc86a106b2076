/**
 * The structure a parse step returns beside its text: the document's elements in reading order.
 * Type names are Unstructured's, so users moving from it map them one to one.
 */
export type ElementType =
  | "Title"
  | "NarrativeText"
  | "ListItem"
  | "Table"
  | "Header"
  | "Footer"
  | "PageNumber"
  | "Image"
  | "FigureCaption"
  | "Address"
  | "EmailAddress"
  | "Formula"
  | "CodeSnippet"
  | "UncategorizedText";

/** `[x0, y0, x1, y1]` from the page's top-left corner: PDF points for PDF pages, pixels for pictures. */
export type BoundingBox = [number, number, number, number];

/** A table's cells, row by row, and the same as HTML. */
export interface ElementTable {
  rows: string[][];
  html: string;
  /** XLSX: the name of the sheet the table is. */
  sheet?: string;
}

/** One element of a document; what does not apply is omitted. */
export interface Element {
  type: ElementType;
  text: string;
  /** 1-based page (PDF, OCR), slide (PPTX) or sheet (XLSX). */
  page?: number;
  /** A Title's heading depth, 1-6. */
  level?: number;
  bbox?: BoundingBox;
  table?: ElementTable;
}

/** Element types that are page furniture, not the document's narrative. */
export const FURNITURE: ReadonlySet<ElementType> = new Set(["Header", "Footer", "PageNumber"]);

/** A heading depth clamped to 1-6. */
export function headingLevel(depth: number): number {
  return Math.min(6, Math.max(1, Math.round(depth)));
}
