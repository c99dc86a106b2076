import { Worker } from "node:worker_threads";
import { StepError } from "../step-error.ts";
import { THREAD_HEAP_MB } from "./limits.ts";
import type { ThreadAnswer, ThreadReady, ThreadReply, ThreadRequest } from "./thread.ts";

/**
 * What pipe authors write (regular expressions, JSON Schemas, JSONata expressions) runs over
 * untrusted documents, so one that backtracks, loops or builds a huge value must not hold the
 * process's event loop (which the edge and the RPCs share) nor its memory: it runs in a sandbox
 * thread (thread.ts), awaited, with a heap of THREAD_HEAP_MB; past its time budget or its heap the
 * thread is ended (V8 interrupts a backtracking regex or a built-in mid-way) and the next request
 * starts a new one. At most MAX_THREADS requests run at once; the others wait their turn, and a
 * request's budget starts when its thread takes it, so a slow request's neighbours in the queue are
 * not timed out by its wait.
 *
 * The threads are shared fairly between organizations: one runs at most one request at a time, and
 * one whose request was ended at its time budget or its heap gets no thread for as long as that
 * request held one (see `rests`). A pipe that evaluates a hog in a loop then holds at most half of
 * one thread; threads at low priority alone were not enough, as a hog's allocation and its
 * collector slow the whole machine (bench/README.md).
 *
 * Hand-kept rather than a library such as piscina (not a dependency): a budget must end the thread
 * that runs past it, and a schema's compiling is timed apart from its check (COMPILE_BUDGET_MS).
 */

/** How long a new thread may take to start before a request is refused (a busy machine is slow to start one). */
const START_BUDGET_MS = 10_000;
/** The matching time one step's patterns and schema checks may take together (an extract step matches page by page). */
export const STEP_BUDGET_MS = 1000;
/** How much later than its budget a thread is ended: the main thread may notice the answer late. */
const TIMER_SLACK_MS = 25;
/**
 * How long a thread may take to compile a schema it has not compiled yet, before the check's own
 * budget starts (the thread says when it starts and ends compiling): compiling is not the value's
 * fault. The slowest schema we found within the 32 KB a schema may have compiled in 0.3-0.6 s; the
 * rest is room for a busy machine.
 */
const COMPILE_BUDGET_MS = 10_000;

/**
 * Requests run at once, each in its own thread: a hostile one holds a thread for its budget while
 * the other serves the rest. More threads measured no faster for the worked example, each an isolate of its own.
 */
const MAX_THREADS = 2;

/**
 * How a step's in-process matches are bounded (see patterns.ts): the steps they may take together,
 * a few milliseconds at worst; past that they go to a thread.
 */
const IN_PROCESS_STEPS_PER_STEP = 2_500_000;

/**
 * What the thread requests of one step share: STEP_BUDGET_MS of thread time in all (time waiting
 * for a thread is not counted), and the run's signal, which takes its waiting requests out of the queue.
 */
export interface PatternBudget {
  leftMs: number;
  /** What is left of IN_PROCESS_STEPS_PER_STEP. */
  inProcessSteps: number;
  signal: AbortSignal | undefined;
  /** The organization whose work it is, for its fair share of the threads; none for the service's own. */
  organizationId: string | undefined;
}

/** Whose sandbox work it is: the organization of the run, and the run's signal. */
export interface SandboxCaller {
  organizationId: string;
  signal?: AbortSignal | undefined;
}

/** A step's budget for its patterns and schema checks. */
export function patternBudget(caller?: SandboxCaller): PatternBudget {
  return { leftMs: STEP_BUDGET_MS, inProcessSteps: IN_PROCESS_STEPS_PER_STEP, signal: caller?.signal, organizationId: caller?.organizationId };
}

/** How a request that ran past a limit fails: each caller names its own limit and code. */
export interface LimitErrors {
  /** It took all of its own cap (one that ran out of the step's budget fails with stepTimeout). */
  timeout(field: string): Error;
  /** Its thread ran out of its heap. */
  memory(field: string): Error;
}

interface Request {
  request: ThreadRequest;
  field: string;
  /** The most time this one request may take: a pattern's own budget, the step's for a validation. */
  capMs: number;
  errors: LimitErrors;
  budget: PatternBudget;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** A sandbox thread; `online` once its script has loaded and listens (it says so). */
interface SandboxThread {
  worker: Worker;
  online: Promise<void>;
  /** Set when V8 ended it for its heap. */
  outOfMemory: boolean;
}

const idle: SandboxThread[] = [];
let running = 0;
const waiting: Request[] = [];
/** Organizations with a request on a thread. */
const busy = new Set<string>();
/** Organizations resting after a request ended at its limit: until when (performance.now()). */
const resting = new Map<string, number>();
/** The timer that looks at the queue again when the first rest ends, and when it fires. */
let restTimer: { timer: NodeJS.Timeout; at: number } | undefined;
const THREAD_SCRIPT = new URL("./thread-start.ts", import.meta.url);

/** The error of a step whose patterns took all of STEP_BUDGET_MS. */
function stepTimeout(field: string): StepError {
  return new StepError("pattern_timeout", `${field}: the step's patterns took longer than ${STEP_BUDGET_MS} ms in all; simplify them`, { field });
}

function compileTimeout(field: string): StepError {
  return new StepError("validation_timeout", `${field}: compiling the schema took longer than ${COMPILE_BUDGET_MS / 1000} s; make it smaller`, { field });
}

function startThread(): SandboxThread {
  const worker = new Worker(THREAD_SCRIPT, { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
  // It does not keep the process alive.
  worker.unref();
  const thread: SandboxThread = { worker, online: Promise.resolve(), outOfMemory: false };
  // A thread ended for its budget or its heap reports an error and exits; whoever waits on it learns of it by its exit.
  worker.on("error", (error: Error & { code?: string }) => {
    if (error.code === "ERR_WORKER_OUT_OF_MEMORY") thread.outOfMemory = true;
  });
  thread.online = new Promise<void>((resolve, reject) => {
    worker.once("message", (message: ThreadReady) => (message.ready ? resolve() : reject(new Error("it said something else first"))));
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("its thread ended as it started")));
  });
  // Handled where a request waits for it; a thread that failed to start is never reused.
  thread.online.catch(() => {});
  worker.once("exit", () => {
    const at = idle.indexOf(thread);
    if (at !== -1) idle.splice(at, 1);
  });
  return thread;
}

/**
 * The first waiting request whose organization has no request on a thread and is not resting; when
 * only resting ones wait, a timer calls next() as the first rest ends.
 */
function takeNext(): Request | undefined {
  const now = performance.now();
  let restEnds = Number.POSITIVE_INFINITY;
  for (const [at, request] of waiting.entries()) {
    const { organizationId } = request.budget;
    if (organizationId === undefined) return waiting.splice(at, 1)[0];
    if (busy.has(organizationId)) continue;
    const until = resting.get(organizationId) ?? 0;
    if (until <= now) {
      resting.delete(organizationId);
      return waiting.splice(at, 1)[0];
    }
    restEnds = Math.min(restEnds, until);
  }
  if (restEnds !== Number.POSITIVE_INFINITY && (restTimer === undefined || restEnds < restTimer.at)) {
    if (restTimer !== undefined) clearTimeout(restTimer.timer);
    const timer = setTimeout(() => {
      restTimer = undefined;
      next();
    }, restEnds - now);
    timer.unref();
    restTimer = { timer, at: restEnds };
  }
  return undefined;
}

/**
 * An organization whose request was ended at its limit rests as long as the request held its
 * thread: its next request waits behind everyone else's for that long.
 */
function rests(organizationId: string, heldMs: number): void {
  resting.set(organizationId, performance.now() + heldMs);
}

/** Runs the next waiting request (see takeNext) on an idle thread (or a new one) while fewer than MAX_THREADS run. */
function next(): void {
  while (running < MAX_THREADS) {
    const request = takeNext();
    if (request === undefined) return;
    let thread: SandboxThread;
    try {
      thread = idle.pop() ?? startThread();
    } catch (error) {
      request.reject(new Error(`${request.field}: could not be run in a sandbox thread: ${(error as Error).message}`));
      continue;
    }
    running++;
    const { organizationId } = request.budget;
    if (organizationId !== undefined) busy.add(organizationId);
    const started = performance.now();
    void runOn(thread, request).then((endedAtLimit) => {
      running--;
      if (organizationId !== undefined) {
        busy.delete(organizationId);
        if (endedAtLimit) rests(organizationId, performance.now() - started);
      }
      next();
    });
  }
}

type Outcome = ThreadAnswer | { error: string } | "timeout" | "ended";

/**
 * Sends the request to the thread once it is online and settles it by the thread's answer or the
 * budget; whether the request ended at its time budget (the thread ended, or the evaluation stopped
 * itself) or its heap.
 */
async function runOn(thread: SandboxThread, request: Request): Promise<boolean> {
  const { worker } = thread;
  let started: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      thread.online,
      new Promise<never>((_, reject) => {
        started = setTimeout(() => reject(new Error(`its thread did not start within ${START_BUDGET_MS} ms`)), START_BUDGET_MS);
      }),
    ]);
  } catch (error) {
    void worker.terminate();
    request.reject(new Error(`${request.field}: could not be run in a sandbox thread: ${(error as Error).message}`));
    return false;
  } finally {
    clearTimeout(started);
  }
  // Under a millisecond left is spent: a timer cannot measure less.
  if (request.budget.leftMs < 1) {
    idle.push(thread);
    request.reject(stepTimeout(request.field));
    return false;
  }
  const allowedMs = Math.min(request.capMs, request.budget.leftMs);
  /** The thread is compiling a schema (it says so), on COMPILE_BUDGET_MS rather than the check's budget. */
  let compiling = false;
  // The thread times its own work, which is what the step is charged: the main thread may be
  // busy elsewhere when the answer arrives. The timer that ends the thread allows for that too.
  const reply = await new Promise<Outcome>((resolve) => {
    let budget = setTimeout(() => resolve("timeout"), allowedMs + TIMER_SLACK_MS);
    const answered = (message: ThreadReply) => {
      if (!("compiling" in message)) return settle(message);
      compiling = message.compiling;
      clearTimeout(budget);
      budget = setTimeout(() => resolve("timeout"), (compiling ? COMPILE_BUDGET_MS : allowedMs) + TIMER_SLACK_MS);
      worker.once("message", answered);
    };
    const ended = () => settle("ended");
    const settle = (result: Outcome) => {
      clearTimeout(budget);
      worker.off("message", answered);
      worker.off("exit", ended);
      resolve(result);
    };
    worker.once("message", answered);
    worker.once("exit", ended);
    try {
      worker.postMessage(request.request);
    } catch (error) {
      // A value that cannot be copied to the thread (a function): the thread is not told.
      settle({ error: (error as Error).name === "DataCloneError" ? "the value holds something that is not data (a function)" : (error as Error).message });
    }
  });
  request.budget.leftMs -= reply === "timeout" && !compiling ? allowedMs : typeof reply === "object" && "ms" in reply ? reply.ms : 0;
  if (reply === "timeout" || reply === "ended" || "error" in reply) {
    // The thread is ended (interrupting a backtracking regex or a built-in) or has ended; the next request starts a new one.
    void worker.terminate();
    if (reply === "timeout" && compiling) request.reject(compileTimeout(request.field));
    else if (reply === "timeout") request.reject(allowedMs < request.capMs ? stepTimeout(request.field) : request.errors.timeout(request.field));
    else if (thread.outOfMemory) request.reject(request.errors.memory(request.field));
    else request.reject(new Error(`${request.field}: could not be run in a sandbox thread: ${reply === "ended" ? "its thread ended" : reply.error}`));
    return reply === "timeout" || thread.outOfMemory;
  }
  idle.push(thread);
  request.resolve(reply.value);
  // An evaluation that stopped itself at its time limit held the thread as long as one ended for it.
  return reply.ranOutOfTime === true;
}

/**
 * Runs `request` in a sandbox thread within `capMs` and the step's `budget`; its answer, or the
 * error of the limit it ran past.
 */
export function runInThread<T>(request: ThreadRequest, field: string, budget: PatternBudget, capMs: number, errors: LimitErrors): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const { signal } = budget;
    if (signal?.aborted) return reject(signal.reason);
    if (budget.leftMs < 1) return reject(stepTimeout(field));
    const settled = () => signal?.removeEventListener("abort", stopped);
    const queued: Request = {
      request,
      field,
      capMs,
      errors,
      budget,
      resolve: (value) => {
        settled();
        resolve(value as T);
      },
      reject: (error) => {
        settled();
        reject(error);
      },
    };
    // A run that stops (cancelled, its lease lost) takes its requests that wait for a thread out of the queue.
    const stopped = () => {
      const at = waiting.indexOf(queued);
      if (at === -1) return;
      waiting.splice(at, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stopped, { once: true });
    waiting.push(queued);
    next();
  });
}
