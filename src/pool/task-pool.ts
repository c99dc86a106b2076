import { readFile } from "node:fs/promises";
import Tinypool from "tinypool";
import type { TaskKind, TaskKinds, TaskStarted } from "./tasks.ts";

export interface TaskPoolOptions {
  /** Processes running tasks at once; further tasks wait for one. */
  size: number;
  /** Time budget of one task, from the moment a process starts it (ms). */
  timeoutMs: number;
  /** Memory budget of one task: the resident memory of the process running it (MB). */
  memoryMb: number;
}

/** A task went past its time or memory budget; its process was ended. */
export class TaskBudgetError extends Error {
  override name = "TaskBudgetError";
  readonly budget: "time" | "memory";

  constructor(budget: "time" | "memory", message: string) {
    super(message);
    this.budget = budget;
  }
}

/** How often the memory of a process running a task is read (ms). */
const MEMORY_CHECK_MS = 25;

/**
 * Runs untrusted work (parsing, OCR) in child processes apart from the event loop that serves HTTP.
 * Processes, not worker threads: the memory a parser takes as ArrayBuffers (pdf.js inflating a
 * stream) is outside V8's heap, so a thread's `resourceLimits` does not bound it and it would grow
 * this process. Each task has a time budget and a memory budget; past either its process is ended
 * (the pool starts a fresh one) and the task fails with a TaskBudgetError. The memory budget is the
 * process's resident set, read from /proc every MEMORY_CHECK_MS, plus V8's heap limit at the same
 * size (where /proc is missing, only the heap limit holds). Pool processes get no environment:
 * no secret is within reach of a hostile document.
 */
export class TaskPool {
  readonly options: TaskPoolOptions;
  readonly #pool: Tinypool;

  constructor(options: TaskPoolOptions) {
    this.options = options;
    this.#pool = new Tinypool({
      filename: new URL("./task-entry.ts", import.meta.url).href,
      runtime: "child_process",
      minThreads: 0,
      maxThreads: options.size,
      idleTimeout: 60_000,
      execArgv: [`--max-old-space-size=${options.memoryMb}`],
      env: {},
      serialization: "advanced",
    });
  }

  /**
   * Runs a task of `kind` in a pool process. Rejects with a TaskBudgetError past a budget, with
   * `signal`'s reason when it aborts (the process is ended), or with the error the task threw.
   */
  async run<K extends TaskKind>(kind: K, input: TaskKinds[K]["input"], signal: AbortSignal): Promise<TaskKinds[K]["output"]> {
    const { timeoutMs, memoryMb } = this.options;
    const stop = new AbortController();
    const forward = () => stop.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let memoryCheck: NodeJS.Timeout | undefined;
    const started = (pid: number) => {
      timer = setTimeout(() => stop.abort(new TaskBudgetError("time", `it took longer than ${timeoutMs} ms`)), timeoutMs);
      memoryCheck = watchMemory(pid, memoryMb, () => stop.abort(new TaskBudgetError("memory", `it needed more than ${memoryMb} MB`)));
    };
    const channel = {
      postMessage: (message: unknown) => {
        if ((message as TaskStarted | undefined)?.docpipeTaskStarted === true) started((message as TaskStarted).pid);
      },
    };
    try {
      return await this.#pool.run({ kind, input }, { signal: stop.signal, channel });
    } catch (error) {
      if (stop.signal.aborted) throw stop.signal.reason;
      // The process died under the task: V8's heap limit ends a process that passes it.
      if ((error as Error).message === "Worker exited unexpectedly") throw new TaskBudgetError("memory", `it needed more than ${memoryMb} MB`);
      throw revive(error);
    } finally {
      clearTimeout(timer);
      clearInterval(memoryCheck);
      signal.removeEventListener("abort", forward);
    }
  }

  /** Ends every process; tasks in flight are rejected. */
  async destroy(): Promise<void> {
    await this.#pool.destroy();
  }
}

/** Calls `exceeded` once the resident memory of process `pid` passes `memoryMb`; returns the interval to clear. */
function watchMemory(pid: number, memoryMb: number, exceeded: () => void): NodeJS.Timeout {
  let reading = false;
  const check = setInterval(() => {
    if (reading) return;
    reading = true;
    residentKb(pid)
      .then((kb) => {
        if (kb !== undefined && kb > memoryMb * 1024) exceeded();
        if (kb === undefined) clearInterval(check);
      })
      .finally(() => {
        reading = false;
      });
  }, MEMORY_CHECK_MS);
  return check;
}

/** VmRSS of a process in kB, or undefined without /proc (or once the process is gone). */
async function residentKb(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "latin1");
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** A task's error arrives as a plain object (name, message, own properties); make it an Error again. */
function revive(error: unknown): Error {
  if (error instanceof Error) return error;
  const { name, message, stack: _stack, ...properties } = error as { name?: string; message?: string; stack?: string };
  return Object.assign(new Error(message ?? String(error)), properties, { name: name ?? "Error" });
}
