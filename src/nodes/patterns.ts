import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import { StepError } from "./step-error.ts";

/**
 * Regular expressions come from pipe authors and run over untrusted documents, so one with
 * catastrophic backtracking must not hold the worker's event loop: every match runs in a thread of
 * its own, waited for synchronously (Atomics.wait) within a time budget; past it, the thread is
 * ended (V8 interrupts the backtracking regex) and the next match starts a new one.
 *
 * Hand-written rather than a vm script with a timeout: that starts a watchdog thread for every
 * match (about 0.4 ms each, on every run's classify and extract steps); the thread here is kept.
 * Not a library such as synckit: on a timeout it leaves the thread running the regex.
 */
const MATCH_BUDGET_MS = 250;
/** How long a new thread may take to start before a match is refused (a busy machine is slow to start one). */
const START_BUDGET_MS = 10_000;

const MATCHER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { state, port } = workerData;
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
  port.postMessage(reply);
  Atomics.store(state, DONE, 1);
  Atomics.notify(state, DONE);
});
Atomics.store(state, READY, 1);
Atomics.notify(state, READY);
`;
/** Slots of the shared state: the thread has started; the match asked for has an answer. */
const READY = 0;
const DONE = 1;

interface Matcher {
  worker: Worker;
  state: Int32Array;
  replies: MessagePort;
}

let matcher: Matcher | undefined;

function startMatcher(): Matcher {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1: replies, port2: port } = new MessageChannel();
  const worker = new Worker(`const READY = ${READY}, DONE = ${DONE};\n${MATCHER_SOURCE}`, {
    eval: true,
    workerData: { state, port },
    transferList: [port],
    // A regex that builds a huge match list is bounded too.
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  // Neither the thread nor its port keeps the process alive.
  worker.unref();
  replies.unref();
  // A thread ended for its budget reports an error or exit; nothing waits on it then.
  worker.on("error", () => {});
  return { worker, state, replies };
}

function endMatcher(ended: Matcher): void {
  if (matcher === ended) matcher = undefined;
  void ended.worker.terminate();
  ended.replies.close();
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

function run<T>(pattern: RegExp, text: string, all: boolean, field: string): T {
  matcher ??= startMatcher();
  const current = matcher;
  if (Atomics.wait(current.state, READY, 0, START_BUDGET_MS) === "timed-out") {
    endMatcher(current);
    throw new Error(`${field}: the pattern could not be run: its thread did not start within ${START_BUDGET_MS} ms`);
  }
  Atomics.store(current.state, DONE, 0);
  current.worker.postMessage({ source: pattern.source, flags: pattern.flags, text, all });
  if (Atomics.wait(current.state, DONE, 0, MATCH_BUDGET_MS) === "timed-out") {
    endMatcher(current);
    throw timeout(field);
  }
  const reply = receiveMessageOnPort(current.replies)?.message as { value: T } | { error: string } | undefined;
  if (reply === undefined || "error" in reply) {
    endMatcher(current);
    throw new Error(`${field}: the pattern could not be run: ${reply?.error ?? "its thread gave no answer"}`);
  }
  return reply.value;
}

/** Every match of `pattern` in `text`, within the time budget. */
export function findMatches(pattern: RegExp, text: string, field: string): PatternMatch[] {
  return run<PatternMatch[]>(pattern, text, true, field);
}

/** Whether `pattern` matches somewhere in `text`, within the time budget. */
export function testPattern(pattern: RegExp, text: string, field: string): boolean {
  return run<boolean>(pattern, text, false, field);
}
