import type { StoredFile } from "../pool/stored-file.ts";
import { TaskBudgetError, TaskCrashError, type TaskPool } from "../pool/task-pool.ts";
import { PARSE_ERROR_CODES, type ParseOptions, type ParseOutput } from "../parse/parse-document.ts";

/** Every code a parse step can fail with; the step's error starts with it (`parse_timeout: ...`). */
export const PARSE_STEP_ERROR_CODES = ["parse_timeout", "parse_memory_exceeded", "parse_crashed", ...PARSE_ERROR_CODES] as const;
type ParseStepErrorCode = (typeof PARSE_STEP_ERROR_CODES)[number];

const DOCUMENT_CODES = new Set<string>(PARSE_ERROR_CODES);

/** A parse step's failure: its message is `<code>: <why>`, its code stable for programs. */
class ParseStepError extends Error {
  override name = "ParseStepError";
  readonly code: ParseStepErrorCode;

  constructor(code: ParseStepErrorCode, reason: string) {
    super(`${code}: ${reason}`);
    this.code = code;
  }
}

/**
 * Parses the stored document in the task pool (which reads and checks it), within its time and memory
 * budgets. Throws a ParseStepError when the document cannot be parsed, a budget is passed or the
 * parse process dies otherwise (parse_crashed, with the signal), the
 * StoredFileError when the file is missing or corrupt, and `signal`'s reason when it aborts.
 */
export async function parseInPool(pool: TaskPool, format: string, file: StoredFile, options: ParseOptions, signal: AbortSignal): Promise<ParseOutput> {
  try {
    return await pool.run("parse", { format, file, options }, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof TaskBudgetError) {
      throw error.budget === "time"
        ? new ParseStepError("parse_timeout", `the parse took longer than its budget of ${pool.options.timeoutMs} ms`)
        : new ParseStepError("parse_memory_exceeded", `the parse needed more than its budget of ${pool.options.memoryMb} MB`);
    }
    if (error instanceof TaskCrashError) {
      throw new ParseStepError("parse_crashed", `the parse process died ${error.starting ? "while starting" : "under the document"} (${error.how})`);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && DOCUMENT_CODES.has(code)) throw new ParseStepError(code as ParseStepErrorCode, (error as Error).message);
    throw error;
  }
}
