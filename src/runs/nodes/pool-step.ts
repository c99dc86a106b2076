import { TaskBudgetError, TaskCrashError, type TaskPool } from "../../documents/pool/task-pool.ts";
import type { TaskKind, TaskKinds } from "../../documents/pool/tasks.ts";
import { PARSE_ERROR_CODES } from "../../documents/parse/parse-error.ts";
import { SPLIT_ERROR_CODES } from "../../documents/split/split-plan.ts";

/**
 * Every code a step run in the task pool (parse, split) can fail with; the step's error starts with
 * it (`parse_timeout: ...`). The budget and crash codes name the parse process, whatever the task.
 */
export const POOL_STEP_ERROR_CODES = ["parse_timeout", "parse_memory_exceeded", "parse_crashed", ...PARSE_ERROR_CODES, ...SPLIT_ERROR_CODES] as const;
type PoolStepErrorCode = (typeof POOL_STEP_ERROR_CODES)[number];

const DOCUMENT_CODES = new Set<string>([...PARSE_ERROR_CODES, ...SPLIT_ERROR_CODES]);

/** A pool step's failure: its message is `<code>: <why>`, its code stable for programs. */
class PoolStepError extends Error {
  override name = "PoolStepError";
  readonly code: PoolStepErrorCode;

  constructor(code: PoolStepErrorCode, reason: string) {
    super(`${code}: ${reason}`);
    this.code = code;
  }
}

/**
 * Runs a task on a stored document in the task pool (which reads and checks it), within its time and
 * memory budgets. Throws a PoolStepError when the document cannot be read as asked, a budget is
 * passed or the process dies otherwise (parse_crashed, with the signal), the StoredFileError when
 * the file is missing or corrupt, and `signal`'s reason when it aborts.
 */
export async function runInPool<K extends TaskKind>(
  pool: TaskPool,
  kind: K,
  input: TaskKinds[K]["input"],
  signal: AbortSignal,
): Promise<TaskKinds[K]["output"]> {
  try {
    return await pool.run(kind, input, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    if (error instanceof TaskBudgetError) {
      throw error.budget === "time"
        ? new PoolStepError("parse_timeout", `the ${kind} took longer than its budget of ${pool.options.timeoutMs} ms`)
        : new PoolStepError("parse_memory_exceeded", `the ${kind} needed more than its budget of ${pool.options.memoryMb} MB`);
    }
    if (error instanceof TaskCrashError) {
      throw new PoolStepError("parse_crashed", `the parse process died ${error.starting ? "while starting" : "under the document"} (${error.how})`);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && DOCUMENT_CODES.has(code)) throw new PoolStepError(code as PoolStepErrorCode, (error as Error).message);
    throw error;
  }
}
