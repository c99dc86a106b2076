import { constants, setPriority } from "node:os";
import { ocrEnginesKept } from "../parse/ocr.ts";
import { parseDocument } from "../parse/parse-document.ts";
import { splitPdf } from "../split/split-pdf.ts";
import { splitTiff } from "../split/split-tiff.ts";
import { readStoredFile } from "./stored-file.ts";
import type { ProcessMessage, Task, TaskKind, TaskKinds } from "./tasks.ts";

// The module each process of the task pool runs (src/documents/pool/task-pool.ts). The handlers' code is
// loaded when the process starts, before it says it is ready, so a task's time budget is spent on
// the task alone (parsing brings pdf.js, sharp and tesseract.js, which take a while to load).

// Below normal CPU priority: when cores are short, the process serving HTTP goes first and the
// parse waits (lowering one's own priority needs no privilege).
setPriority(constants.priority.PRIORITY_BELOW_NORMAL);

type Handlers = { [K in TaskKind]: (input: TaskKinds[K]["input"]) => Promise<TaskKinds[K]["output"]> };

const HANDLERS: Handlers = {
  parse: async ({ format, file, options }) => {
    return parseDocument(format, await readStoredFile(file), options);
  },
  split: async ({ format, file, settings, maxParts }) => (format === "tiff" ? splitTiff : splitPdf)(await readStoredFile(file), settings, maxParts),
};

const residentMb = () => Math.round(process.memoryUsage.rss() / (1024 * 1024));
// An OCR engine's WebAssembly memory never shrinks: a process that ran one is not given another document.
const spent = () => ocrEnginesKept() > 0;

function reply(message: ProcessMessage): void {
  process.send?.(message);
}

// One task at a time: the pool sends the next only after this one's result.
process.on("message", (task: Task) => {
  const handler = HANDLERS[task.kind] as (input: Task["input"]) => Promise<unknown>;
  handler(task.input).then(
    (output) => reply({ docpipeResult: true, ok: true, output, residentMb: residentMb(), spent: spent() }),
    (error: Error) => {
      const code = (error as { code?: unknown }).code;
      const shape = { name: String(error?.name ?? "Error"), message: String(error?.message ?? error), ...(typeof code === "string" ? { code } : {}) };
      reply({ docpipeResult: true, ok: false, error: shape, residentMb: residentMb(), spent: spent() });
    },
  );
});
// The pool is gone (or closed the channel): nothing more will come, and OCR threads would keep this process alive.
process.on("disconnect", () => process.exit(0));
reply({ docpipeReady: true, residentMb: residentMb() });
