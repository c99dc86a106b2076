import { Worker } from "node:worker_threads";
import { StepError } from "./step-error.ts";

/**
 * Regular expressions come from pipe authors and run over untrusted documents, so one with
 * catastrophic backtracking must not hold the process's event loop (which the edge may share):
 * every match runs in a thread kept for matching, and is awaited; past its time budget the thread
 * is ended (V8 interrupts the backtracking regex) and the next match starts a new one. At most
 * MAX_MATCHERS matches run at once; the others wait their turn, and a match's budget starts when
 * its thread takes it, so a slow pattern's neighbours in the queue are not timed out by its wait.
 *
 * Hand-written rather than a vm script with a timeout: that starts a watchdog thread for every
 * match (about 0.4 ms each, on every run's classify and extract steps) and blocks the event loop
 * until it ends. Not a library such as piscina: a timeout must end the thread that is backtracking.
 */
const MATCH_BUDGET_MS = 250;
/** How long a new thread may take to start before a match is refused (a busy machine is slow to start one). */
const START_BUDGET_MS = 10_000;
/**
 * Matches run at once, each in its own thread: a hostile pattern holds one for its budget while the
 * other serves the rest. More threads measured no faster for the worked example, each an isolate of its own.
 */
const MAX_MATCHERS = 2;

const MATCHER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const compiled = new Map();
parentPort.on("message", ({ source, flags, text, all }) => {
  let reply;
  try {
    let pattern = compiled.get(flags + "/" + source);
    if (pattern === undefined) {
      if (compiled.size >= 500) compiled.clear();
      pattern = new RegExp(source, flags);
      compiled.set(flags + "/" + source, pattern);
    }
    pattern.lastIndex = 0;
    reply = { value: all ? Array.from(text.matchAll(pattern), (m) => ({ index: m.index, groups: Array.from(m) })) : pattern.test(text) };
  } catch (error) {
    reply = { error: String(error && error.message) };
  }
  parentPort.postMessage(reply);
});
`;

interface Match {
  request: { source: string; flags: string; text: string; all: boolean };
  field: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** A thread kept for matching; `online` once its script runs (its listener is then attached). */
interface Matcher {
  worker: Worker;
  online: Promise<void>;
}

const idle: Matcher[] = [];
let running = 0;
const waiting: Match[] = [];

function startMatcher(): Matcher {
  const worker = new Worker(MATCHER_SOURCE, {
    eval: true,
    // A regex that builds a huge match list is bounded too.
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  // A kept thread does not keep the process alive.
  worker.unref();
  const online = new Promise<void>((resolve, reject) => {
    worker.once("online", resolve);
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("its thread ended as it started")));
  });
  // Handled where a match waits for it; a thread that failed to start is never reused.
  online.catch(() => {});
  // A thread ended for its budget reports an error and exits; the match it ran learns of it by the exit.
  worker.on("error", () => {});
  const matcher: Matcher = { worker, online };
  worker.once("exit", () => {
    const at = idle.indexOf(matcher);
    if (at !== -1) idle.splice(at, 1);
  });
  return matcher;
}

/** Runs the next waiting match on an idle thread (or a new one) while fewer than MAX_MATCHERS run. */
function next(): void {
  while (running < MAX_MATCHERS && waiting.length > 0) {
    const match = waiting.shift()!;
    running++;
    void runOn(idle.pop() ?? startMatcher(), match).finally(() => {
      running--;
      next();
    });
  }
}

/** Sends the match to the thread once it is online and settles it by the thread's answer or the budget. */
async function runOn(matcher: Matcher, match: Match): Promise<void> {
  const { worker } = matcher;
  let started: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      matcher.online,
      new Promise<never>((_, reject) => {
        started = setTimeout(() => reject(new Error(`its thread did not start within ${START_BUDGET_MS} ms`)), START_BUDGET_MS);
      }),
    ]);
  } catch (error) {
    void worker.terminate();
    match.reject(new Error(`${match.field}: the pattern could not be run: ${(error as Error).message}`));
    return;
  } finally {
    clearTimeout(started);
  }
  const reply = await new Promise<{ value: unknown } | { error: string } | "timeout" | "ended">((resolve) => {
    const budget = setTimeout(() => resolve("timeout"), MATCH_BUDGET_MS);
    const answered = (message: { value: unknown } | { error: string }) => settle(message);
    const ended = () => settle("ended");
    const settle = (result: { value: unknown } | { error: string } | "timeout" | "ended") => {
      clearTimeout(budget);
      worker.off("message", answered);
      worker.off("exit", ended);
      resolve(result);
    };
    worker.once("message", answered);
    worker.once("exit", ended);
    worker.postMessage(match.request);
  });
  if (reply === "timeout" || reply === "ended" || "error" in reply) {
    // The thread is ended (interrupting a backtracking regex) or has ended; the next match starts a new one.
    void worker.terminate();
    if (reply === "timeout") match.reject(timeout(match.field));
    else match.reject(new Error(`${match.field}: the pattern could not be run: ${reply === "ended" ? "its thread ended" : reply.error}`));
    return;
  }
  idle.push(matcher);
  match.resolve(reply.value);
}

export interface PatternMatch {
  index: number;
  /** The whole match, then each capture group (undefined when it took no part). */
  groups: (string | undefined)[];
}

/** A pipe's pattern compiled case-insensitively with Unicode semantics; `field` names it in the error. */
export function compilePattern(source: string, field: string): RegExp {
  try {
    return new RegExp(source, "giu");
  } catch (error) {
    throw new StepError("pattern_invalid", `${field}: ${(error as Error).message}`, { field });
  }
}

function timeout(field: string): StepError {
  return new StepError("pattern_timeout", `${field}: the pattern took longer than ${MATCH_BUDGET_MS} ms; simplify it (nested repetition backtracks)`, {
    field,
  });
}

function run<T>(pattern: RegExp, text: string, all: boolean, field: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    waiting.push({ request: { source: pattern.source, flags: pattern.flags, text, all }, field, resolve: resolve as (value: unknown) => void, reject });
    next();
  });
}

/** Every match of `pattern` in `text`, within the time budget. */
export function findMatches(pattern: RegExp, text: string, field: string): Promise<PatternMatch[]> {
  return run<PatternMatch[]>(pattern, text, true, field);
}

/** Whether `pattern` matches somewhere in `text`, within the time budget. */
export function testPattern(pattern: RegExp, text: string, field: string): Promise<boolean> {
  return run<boolean>(pattern, text, false, field);
}
