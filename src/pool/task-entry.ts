import { constants, setPriority } from "node:os";
import { parseDocument } from "../parse/parse-document.ts";
import { readStoredFile } from "./stored-file.ts";
import type { Task, TaskKind, TaskKinds, TaskStarted } from "./tasks.ts";

// The module each process of the task pool loads (src/pool/task-pool.ts). The handlers' code is
// loaded with it, when the process starts, so a task's time budget is spent on the task alone
// (parsing brings pdf.js, sharp and tesseract.js, which take a while to load).

// Below normal CPU priority: when cores are short, the process serving HTTP goes first and the
// parse waits (lowering one's own priority needs no privilege).
setPriority(constants.priority.PRIORITY_BELOW_NORMAL);

type Handlers = { [K in TaskKind]: (input: TaskKinds[K]["input"]) => Promise<TaskKinds[K]["output"]> };

const HANDLERS: Handlers = {
  parse: async ({ format, file, options }) => {
    return parseDocument(format, await readStoredFile(file), options);
  },
};

/** Runs one task in this process; tells the pool first, so that its budgets are measured on this process. */
export default async function runTask(task: Task): Promise<unknown> {
  const started: TaskStarted = { docpipeTaskStarted: true, pid: process.pid };
  process.send?.(started);
  const handler = HANDLERS[task.kind] as (input: Task["input"]) => Promise<unknown>;
  return handler(task.input);
}
