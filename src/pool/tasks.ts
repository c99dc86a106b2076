import type { ParseOptions, ParseOutput } from "../parse/parse-document.ts";
import type { StoredFile } from "./stored-file.ts";

/**
 * The kinds of work the task pool runs, each with its input and output (both cross a process
 * boundary by structured clone). A new kind is one entry here and one handler in task-entry.ts.
 */
export interface TaskKinds {
  /** Text and metadata of a stored document, OCR included (src/parse/parse-document.ts). */
  parse: { input: { format: string; file: StoredFile; options?: ParseOptions }; output: ParseOutput };
}

export type TaskKind = keyof TaskKinds;

/** What the pool sends to its process: the kind, and that kind's input. */
export interface Task<K extends TaskKind = TaskKind> {
  kind: K;
  input: TaskKinds[K]["input"];
}

/** The message a pool process sends when it starts a task: its budgets start then, on that process. */
export interface TaskStarted {
  docpipeTaskStarted: true;
  pid: number;
}
