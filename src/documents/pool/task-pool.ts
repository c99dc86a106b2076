import { randomUUID } from "node:crypto";
import { constants } from "node:fs";
import { chmod, chown, copyFile, mkdir, mkdtemp, readFile, rename, rm, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { type Launch, planLaunch, TASK_ENTRY } from "./confinement.ts";
import { PoolProcess, type ProcessEnd } from "./pool-process.ts";
import { type StoredFile, unreadableStoredFile } from "./stored-file.ts";
import type { Task, TaskErrorShape, TaskKind, TaskKinds } from "./tasks.ts";

export interface TaskPoolOptions {
  /** Processes running tasks at once; further tasks wait for one. */
  size: number;
  /** Time budget of one task, from the moment a process starts it (ms). */
  timeoutMs: number;
  /** Memory budget of one task: the resident memory of the process running it (MB). */
  memoryMb: number;
  /**
   * A process whose resident memory after a task exceeds what it had when it became ready by more
   * than this is ended, so the next task starts clean (MB). One that ran OCR always is.
   */
  recycleMb: number;
  /**
   * The first of the unprivileged users and groups processes run as when this process runs as root,
   * each process its own (this id + n, src/documents/pool/confinement.ts); otherwise they run as this process's user.
   */
  user?: { uid: number; gid: number } | undefined;
  /** The module processes run (a path); task-entry.ts unless a test replaces it. */
  entry?: string;
  /** A process not ready for tasks this long after it was started is ended (ms); START_TIMEOUT_MS unless a test shortens it. */
  startTimeoutMs?: number;
  /** An idle process is ended after this long (ms); IDLE_MS unless a test shortens it. */
  idleMs?: number;
  /** Told once, when the first process starts, what confinement this machine does not allow (and the fix). */
  warn?: ((message: string) => void) | undefined;
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

/** The process for a task died of something other than a budget: a signal (a crash, a kill) or an exit. */
export class TaskCrashError extends Error {
  override name = "TaskCrashError";
  /** The signal that ended the process (`SIGSEGV`, `SIGKILL`), or null when it exited or could not start. */
  readonly signal: NodeJS.Signals | null;
  /** How it ended: `signal SIGSEGV`, `exit code 1`, or why it could not start. */
  readonly how: string;
  /** It died while starting, before it was given the task. */
  readonly starting: boolean;
  /** It was ended for sending a message that is not the pool's. */
  readonly misbehaved: boolean;
  /** The code it exited with, or null when a signal ended it. */
  readonly exitCode: number | null;

  constructor(end: ProcessEnd, starting: boolean, reason?: string) {
    const how =
      reason !== undefined
        ? reason
        : end.misbehaved
          ? "it sent a message that is not a result, and was ended"
          : end.signal !== null
            ? `signal ${end.signal}`
            : end.exitCode !== null
              ? `exit code ${end.exitCode}`
              : `no start: ${end.error?.message ?? "unknown error"}`;
    super(`its process died ${starting ? "while starting" : "under the task"} (${how})`);
    this.signal = end.signal;
    this.how = how;
    this.starting = starting;
    this.misbehaved = end.misbehaved;
    this.exitCode = end.exitCode;
  }
}

/** How often the memory of a process running a task is read (ms). */
const MEMORY_CHECK_MS = 25;
/** An idle process is ended after this long (ms). */
const IDLE_MS = 60_000;
/** A process not ready for tasks this long after it was started is ended (ms): loading the parsers takes about a second on a quiet machine, and ten times that on a loaded one. */
const START_TIMEOUT_MS = 30_000;

/** A task waiting for a process, or running in one. */
interface Job {
  task: Task;
  signal: AbortSignal;
  /** Its document's copy in the pool's own folder, made while the task waits (see #prestage), or why it could not be. */
  prestaged: Promise<string | Error>;
  /** It was given to a process, which took its document's copy. */
  dispatched: boolean;
  /** It was given to a second process, its first having died under it. */
  retried: boolean;
  settle: (outcome: { output: unknown } | { error: Error }) => void;
  settled: boolean;
}

/**
 * Runs untrusted work (parsing, OCR) in child processes apart from the event loop that serves HTTP.
 * Processes, not worker threads: the memory a parser takes as ArrayBuffers (pdf.js inflating a
 * stream) is outside V8's heap, so a thread's `resourceLimits` does not bound it and it would grow
 * this process. Each task has a time budget and a memory budget; past either its process is ended
 * (the next task gets a fresh one) and the task fails with a TaskBudgetError. The memory budget is
 * the process's resident set, read from /proc every MEMORY_CHECK_MS, V8's heap limit at the same
 * size, and the kernel's data limit (pool-process.ts). A process that dies otherwise fails its task
 * with a TaskCrashError naming the signal; the pool itself never fails with it.
 *
 * Hand-written rather than tinypool: a process's exit signal, its user, its kernel limits and its
 * stderr are not reachable through tinypool, and tinypool emits `error` for an idle process's
 * death, which ends the service when nobody listens.
 */
export class TaskPool {
  readonly options: TaskPoolOptions;
  /** Tasks waiting for a process, oldest first. */
  readonly #queue: Job[] = [];
  readonly #idle = new Map<PoolProcess, NodeJS.Timeout>();
  /** Processes started and not yet ready. */
  #starting = 0;
  /** Processes alive (starting, idle or running a task). */
  #count = 0;
  #started = 0;
  #staging: Promise<string> | undefined;
  #launch: Promise<Launch> | undefined;
  readonly #processes = new Set<PoolProcess>();
  /**
   * What may still write into the pool's folder: processes being started (each makes its folder)
   * and documents being copied in. `destroy` waits for them before it removes the folder.
   */
  readonly #writing = new Set<Promise<unknown>>();
  /** Processes ended for being idle too long: not replaced. */
  readonly #retired = new Set<PoolProcess>();
  #closed = false;

  constructor(options: TaskPoolOptions) {
    this.options = options;
  }

  /**
   * Runs a task of `kind` in a pool process. Rejects with a TaskBudgetError past a budget, a
   * TaskCrashError when its process dies, `signal`'s reason when it aborts (the process is ended),
   * or with the error the task threw.
   */
  run<K extends TaskKind>(kind: K, input: TaskKinds[K]["input"], signal: AbortSignal): Promise<TaskKinds[K]["output"]> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closed) return Promise.reject(new Error("the task pool is closed"));
    return new Promise((resolve, reject) => {
      const job: Job = {
        task: { kind, input },
        signal,
        prestaged: this.#prestage(input.file),
        dispatched: false,
        retried: false,
        settled: false,
        settle: (outcome) => {
          if (job.settled) return;
          job.settled = true;
          signal.removeEventListener("abort", aborted);
          // A job that never reached a process leaves no copy behind (one that did has moved it on).
          if (!job.dispatched)
            void job.prestaged.then(async (path) => {
              if (typeof path === "string") await removeQuietly(path);
            });
          if ("error" in outcome) reject(outcome.error);
          else resolve(outcome.output as TaskKinds[K]["output"]);
        },
      };
      // A waiting job leaves the queue; a running one is settled here and its process ended by its runner.
      const aborted = () => {
        const position = this.#queue.indexOf(job);
        if (position !== -1) this.#queue.splice(position, 1);
        job.settle({ error: signal.reason });
      };
      signal.addEventListener("abort", aborted, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /**
   * Ends every process; tasks waiting or in flight are rejected. A process still starting is ended
   * once started, and the pool's folder goes once nothing writes into it any more.
   */
  async destroy(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.settle({ error: new Error("the task pool is closed") });
    await Promise.allSettled(this.#writing);
    const processes = [...this.#processes];
    for (const poolProcess of processes) poolProcess.kill();
    await Promise.all(processes.map((poolProcess) => poolProcess.ended));
    // A document being moved to a process as the stop came (see #runOn).
    await Promise.allSettled(this.#writing);
    // A folder that could not be made leaves nothing to remove.
    const folder = await this.#staging?.catch(() => undefined);
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  }

  /** Gives waiting tasks to idle processes, and starts processes for the rest within the pool's size. */
  #dispatch(): void {
    while (this.#queue.length > 0 && this.#idle.size > 0) {
      const [poolProcess, idleTimer] = this.#idle.entries().next().value!;
      clearTimeout(idleTimer);
      this.#idle.delete(poolProcess);
      void this.#runJobs(poolProcess, this.#queue.shift()!);
    }
    while (this.#queue.length > this.#starting && this.#count < this.options.size && !this.#closed) void this.#startProcess();
  }

  /**
   * The pool's folder: one folder per process, which that process may reach (0711: it may reach
   * its own, and list none), `waiting`, which no process may reach, for documents of waiting tasks,
   * and `runtime`, empty, where a process's own mount namespace shows it the code (confinement.ts).
   */
  #stagingFolder(): Promise<string> {
    this.#staging ??= mkdtemp(join(tmpdir(), "docpipe-pool-")).then(async (folder) => {
      await chmod(folder, 0o711);
      await mkdir(join(folder, "waiting"), { mode: 0o700 });
      for (const mountPoint of ["runtime", "runtime/code", "runtime/node"]) await mkdir(join(folder, mountPoint), { mode: 0o755 });
      return folder;
    });
    return this.#staging;
  }

  /** How this pool's processes start, decided (and any warning given) once. */
  #launchPlan(): Promise<Launch> {
    this.#launch ??= this.#stagingFolder().then((staging) =>
      planLaunch({
        firstId: this.options.user,
        entry: this.options.entry ?? TASK_ENTRY,
        mountPoint: join(staging, "runtime"),
        warn: this.options.warn ?? (() => {}),
      }),
    );
    return this.#launch;
  }

  /**
   * Copies the task's document into the pool's `waiting` folder as soon as the task is queued, so
   * that copying overlaps the task running before it; giving it to a process is then a rename (and
   * a chown) rather than a copy the process would sit idle for. A copy (a clone where the file
   * system can) rather than a link: the stored file keeps its owner and mode, which the pool's
   * user must not have.
   */
  #prestage(file: StoredFile): Promise<string | Error> {
    return this.#whileWriting(this.#copyIn(file));
  }

  async #copyIn(file: StoredFile): Promise<string | Error> {
    try {
      const path = join(await this.#stagingFolder(), "waiting", randomUUID());
      // The copy keeps the stored file's mode, readable by its owner only.
      await copyFile(file.path, path, constants.COPYFILE_FICLONE);
      return path;
    } catch (error) {
      return unreadableStoredFile(file, error);
    }
  }

  /** `work`, counted among what writes into the pool's folder until it settles. */
  #whileWriting<T>(work: Promise<T>): Promise<T> {
    this.#writing.add(work);
    const done = () => this.#writing.delete(work);
    work.then(done, done);
    return work;
  }

  async #startProcess(): Promise<void> {
    this.#count++;
    this.#starting++;
    let poolProcess: PoolProcess;
    try {
      const n = ++this.#started;
      poolProcess = await this.#whileWriting(
        (async () => PoolProcess.start(await this.#stagingFolder(), n, { memoryMb: this.options.memoryMb, launch: await this.#launchPlan() }))(),
      );
    } catch (error) {
      this.#count--;
      this.#starting--;
      this.#queue.shift()?.settle({ error: error as Error });
      this.#dispatch();
      return;
    }
    this.#processes.add(poolProcess);
    // Started while the pool was closing: ended with the others (destroy waited for its start).
    if (this.#closed) poolProcess.kill();
    poolProcess.hold(true);
    void poolProcess.ended.then(async () => {
      this.#processes.delete(poolProcess);
      clearTimeout(this.#idle.get(poolProcess));
      this.#idle.delete(poolProcess);
      this.#count--;
      // A process that was ended (a budget, recycling) or died is replaced at once, so the next
      // document does not wait for one to start; one idle too long, or that never started, is not.
      const replace = !this.#retired.has(poolProcess) && (await poolProcess.ready) && !this.#closed && this.#count < this.options.size;
      this.#retired.delete(poolProcess);
      if (replace) void this.#startProcess();
      this.#dispatch();
    });
    // A process that hangs while it starts (stopped, stuck in a native call) would hold its task and a place in the pool.
    let stuck = false;
    const deadline = setTimeout(() => {
      stuck = true;
      poolProcess.kill();
    }, this.options.startTimeoutMs ?? START_TIMEOUT_MS);
    const ready = await poolProcess.ready;
    clearTimeout(deadline);
    this.#starting--;
    if (!ready) {
      // Died while starting: the task it was started for learns why, rather than waiting on a process that may never start.
      const end = await poolProcess.ended;
      const reason = stuck ? `it was not ready within ${this.options.startTimeoutMs ?? START_TIMEOUT_MS} ms, and was ended` : undefined;
      this.#queue.shift()?.settle({ error: new TaskCrashError(end, true, reason) });
      return;
    }
    this.#becomeIdle(poolProcess);
  }

  #becomeIdle(poolProcess: PoolProcess): void {
    if (!poolProcess.alive) return;
    poolProcess.hold(false);
    const retire = () => {
      // No longer idle at once: its exit is seen later, and a task given to it meanwhile would die with it.
      this.#idle.delete(poolProcess);
      this.#retired.add(poolProcess);
      poolProcess.kill();
    };
    this.#idle.set(poolProcess, setTimeout(retire, this.options.idleMs ?? IDLE_MS).unref());
    this.#dispatch();
  }

  /** Runs `job` on `poolProcess`, then returns the process to the idle ones unless it holds too much memory or died. */
  async #runJobs(poolProcess: PoolProcess, job: Job): Promise<void> {
    poolProcess.hold(true);
    const outcome = await this.#runOn(poolProcess, job);
    if (this.#givenAgain(job, outcome)) return;
    job.settle(outcome);
    if (outcome.spent === true || (outcome.residentMb ?? 0) - poolProcess.readyResidentMb > this.options.recycleMb) poolProcess.kill();
    else this.#becomeIdle(poolProcess);
  }

  /**
   * A task whose process exited by itself (code 0, no signal) without its result is given once to a
   * fresh process: a pool process exits so only when it is going away, so its death was the previous
   * document's (it left the process exiting right after its result), not this task's. A crash (a
   * signal, an error code) under the task fails it (parse_crashed), as does a second such exit.
   */
  #givenAgain(job: Job, outcome: { error: Error } | { output: unknown }): boolean {
    const exited = "error" in outcome && outcome.error instanceof TaskCrashError && !outcome.error.misbehaved && outcome.error.exitCode === 0;
    if (!exited || job.retried || job.settled || this.#closed) return false;
    job.retried = true;
    job.dispatched = false;
    job.prestaged = this.#prestage((job.task.input as { file: StoredFile }).file);
    this.#queue.unshift(job);
    this.#dispatch();
    return true;
  }

  async #runOn(poolProcess: PoolProcess, job: Job): Promise<({ output: unknown } | { error: Error }) & { residentMb?: number; spent?: boolean }> {
    if (job.settled) return { error: job.signal.reason };
    const { timeoutMs, memoryMb } = this.options;
    const file = (job.task.input as { file: StoredFile }).file;
    job.dispatched = true;
    const prestaged = await job.prestaged;
    if (prestaged instanceof Error) return { error: prestaged };
    if (this.#closed) return { error: new Error("the task pool is closed") };
    // Into the only folder the process may read, readable by its user only.
    const staged = join(poolProcess.folder, basename(prestaged));
    try {
      await this.#whileWriting(
        (async () => {
          await rename(prestaged, staged);
          if (poolProcess.user !== undefined) await chown(staged, poolProcess.user.uid, poolProcess.user.gid);
        })(),
      );
    } catch (error) {
      return { error: unreadableStoredFile(file, error) };
    }
    // Why this runner ended the process, if it did.
    let ending: Error | undefined;
    const end = (reason: Error) => {
      ending ??= reason;
      poolProcess.kill();
    };
    const abort = () => end(job.signal.reason);
    job.signal.addEventListener("abort", abort, { once: true });
    const timer = setTimeout(() => end(new TaskBudgetError("time", `it took longer than ${timeoutMs} ms`)), timeoutMs);
    const memoryCheck = watchMemory(poolProcess.pid!, memoryMb, () => end(new TaskBudgetError("memory", `it needed more than ${memoryMb} MB`)));
    try {
      if (job.signal.aborted) abort();
      const first = job.signal.aborted
        ? await poolProcess.ended
        : await poolProcess.run({ ...job.task, input: { ...job.task.input, file: { ...file, path: staged } } });
      if ("docpipeResult" in first) {
        const { residentMb, spent } = first;
        return first.ok ? { output: first.output, residentMb, spent } : { error: revive(first.error), residentMb, spent };
      }
      if (ending !== undefined) return { error: ending };
      // V8's heap limit and the kernel's data limit end a process that passes them: that is its memory budget too.
      if (first.outOfMemory) return { error: new TaskBudgetError("memory", `it needed more than ${memoryMb} MB`) };
      return { error: new TaskCrashError(first, false) };
    } finally {
      clearTimeout(timer);
      clearInterval(memoryCheck);
      job.signal.removeEventListener("abort", abort);
      // Not awaited: the process may take its next task meanwhile (a new name each time).
      void removeQuietly(staged);
    }
  }
}

/** Removes a staged copy; one already gone (removed with its process's folder) is no error. */
function removeQuietly(path: string): Promise<void> {
  return unlink(path).catch(() => {});
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

/** A task's error arrives as its name, message and code; make it an Error again. */
function revive({ name, message, code }: TaskErrorShape): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code }, { name });
}
