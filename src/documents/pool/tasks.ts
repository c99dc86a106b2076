import type { ParseOptions, ParseOutput } from "../parse/parse-document.ts";
import type { SplitPart } from "../split/split-pdf.ts";
import type { SplitSettings } from "../split/split-plan.ts";
import type { StoredFile } from "./stored-file.ts";

/**
 * The kinds of work the task pool runs, each with its input and output (both cross a process
 * boundary by structured clone). A new kind is one entry here and one handler in task-entry.ts.
 */
export interface TaskKinds {
  /** Text and metadata of a stored document, OCR included (src/documents/parse/parse-document.ts). */
  parse: { input: { format: string; file: StoredFile; options?: ParseOptions }; output: ParseOutput };
  /** A stored PDF or multi-page TIFF cut into parts, each a document of its format (src/documents/split/). */
  split: { input: { format: "pdf" | "tiff"; file: StoredFile; settings: SplitSettings; maxParts: number }; output: { pageCount: number; parts: SplitPart[] } };
}

export type TaskKind = keyof TaskKinds;

/** What the pool sends to its process: the kind, and that kind's input. */
export interface Task<K extends TaskKind = TaskKind> {
  kind: K;
  input: TaskKinds[K]["input"];
}

/** A task's error as it crosses the process boundary: structured clone keeps no own properties of an Error. */
export interface TaskErrorShape {
  name: string;
  message: string;
  code?: string;
}

/**
 * The messages a pool process sends: once when it is ready for tasks, then one per task. Each says
 * its resident memory (MB) at that moment; a result also says whether the process is `spent`,
 * holding memory it cannot give back (an OCR engine). The pool replaces a spent process, and one
 * that kept more than it may since it was ready.
 */
export type ProcessMessage =
  | { docpipeReady: true; residentMb: number }
  | { docpipeResult: true; ok: true; output: unknown; residentMb: number; spent: boolean }
  | { docpipeResult: true; ok: false; error: TaskErrorShape; residentMb: number; spent: boolean };

/**
 * `message` as a ProcessMessage, or undefined when it is not one. A pool process runs untrusted
 * documents: one taken over by its document may send anything, and what it sends must never throw
 * in the process that reads it.
 */
export function readProcessMessage(message: unknown): ProcessMessage | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const fields = message as Record<string, unknown>;
  if (typeof fields.residentMb !== "number") return undefined;
  if (fields.docpipeReady === true) return message as ProcessMessage;
  if (fields.docpipeResult !== true || typeof fields.spent !== "boolean") return undefined;
  if (fields.ok === true) return message as ProcessMessage;
  if (fields.ok !== false) return undefined;
  const error = fields.error as Record<string, unknown> | null | undefined;
  const isShape =
    typeof error === "object"
    && error !== null
    && typeof error.name === "string"
    && typeof error.message === "string"
    && (error.code === undefined || typeof error.code === "string");
  return isShape ? (message as ProcessMessage) : undefined;
}
