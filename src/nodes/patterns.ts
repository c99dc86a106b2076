import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker, type WorkerOptions } from "node:worker_threads";
import jsonata from "jsonata";
import { LRUCache } from "lru-cache";
import { type PatternCost, patternCost } from "./pattern-steps.ts";
import { StepError } from "./step-error.ts";

/**
 * Regular expressions come from pipe authors and run over untrusted documents, so one with
 * catastrophic backtracking must not hold the process's event loop (which the edge may share):
 * a match runs in a thread kept for matching, and is awaited, unless its pattern is bounded over its
 * text (no unbounded repetition, few enough steps: see inProcess), which most are; past its time budget the thread
 * is ended (V8 interrupts the backtracking regex) and the next match starts a new one. At most
 * MAX_MATCHERS matches run at once; the others wait their turn, and a match's budget starts when
 * its thread takes it, so a slow pattern's neighbours in the queue are not timed out by its wait.
 * A validate node's JSON Schema check runs in these threads too (validateInThread), for its patterns,
 * and so does a JSONata expression that runs past IN_PROCESS_EXPRESSION_MS (evaluateInThread).
 *
 * Hand-written rather than a vm script with a timeout: that starts a watchdog thread for every
 * match (about 0.4 ms each, on every run's classify and extract steps) and blocks the event loop
 * until it ends. Not a library such as piscina: a timeout must end the thread that is backtracking.
 */
const MATCH_BUDGET_MS = 250;
/** How long a new thread may take to start before a match is refused (a busy machine is slow to start one). */
const START_BUDGET_MS = 10_000;
/** The matching time one step's patterns may take together (an extract step matches page by page). */
const STEP_BUDGET_MS = 1000;
/** How much later than its budget a match's thread is ended: the main thread may notice the answer late. */
const TIMER_SLACK_MS = 25;

/**
 * Matches run at once, each in its own thread: a hostile pattern holds one for its budget while the
 * other serves the rest. More threads measured no faster for the worked example, each an isolate of its own.
 */
const MAX_MATCHERS = 2;

/**
 * The most matches findMatches returns for one text: an extract field tries its pattern's matches
 * in order until one holds a value, and a pattern that matches at every position of a long page
 * would otherwise copy a match object per character (125,000 of them held the event loop for about
 * 120 ms as the thread's answer was copied in).
 */
const MAX_MATCHES = 1000;

/**
 * The most characters findMatches returns for one text, its groups' together: a group may hold
 * the rest of the page (`(?=([^]*))` does at every position), and the thread's answer is copied
 * onto the event loop, then read by extract. Once past it, no further match is taken.
 */
const MAX_MATCHED_CHARACTERS = 1_000_000;

/**
 * The first `limit` matches of the global `pattern` in `text`, from its start, up to the first
 * whose groups bring the characters taken past `characters`. The matching thread runs this same
 * function (its source is copied into MATCHER_SOURCE), so both find the same.
 */
function firstMatches(pattern: RegExp, text: string, limit: number, characters: number): PatternMatch[] {
  const found = [];
  let taken = 0;
  pattern.lastIndex = 0;
  for (const match of text.matchAll(pattern)) {
    const groups = Array.from(match);
    found.push({ index: match.index, groups });
    for (const group of groups) taken += group === undefined ? 0 : group.length;
    if (found.length >= limit || taken >= characters) break;
  }
  return found;
}

/** The most matches one call of a JSONata regex function fetches at once (JSONata's own sequence limit). */
const MAX_REST_MATCHES = 100_000;

/**
 * How Ajv compiles and checks a validate node's schema in the matching thread: every error, not just
 * the first, so a reviewer sees all that is wrong at once; formats are not asserted (no ajv-formats).
 */
const AJV_OPTIONS = { allErrors: true, strict: false } as const;
/** Where the matching thread loads Ajv from: an evaluated script resolves nothing by itself. */
const AJV_PATH = createRequire(import.meta.url).resolve("ajv/dist/2020.js");
const JSONATA_PATH = createRequire(import.meta.url).resolve("jsonata");
/** The schemas a matching thread keeps compiled; past that it starts over (a new Ajv, an empty cache). */
const MAX_THREAD_SCHEMAS = 200;
/**
 * How long a thread may take to compile a schema it has not compiled yet, before the check's own
 * budget starts (the thread says when it starts and ends compiling): compiling is not the value's
 * fault. The slowest schema we found within the 32 KB a schema may have compiled in 0.3-0.6 s; the
 * rest is room for a busy machine.
 */
const COMPILE_BUDGET_MS = 10_000;
/** The most errors a validation reports; a large array of bad items would otherwise fill the step. */
const MAX_SCHEMA_ERRORS = 100;

/** Slots of the synchronous matcher's shared state: the thread has started; the exec asked for has an answer. */
const READY = 0;
const DONE = 1;

/**
 * The matching thread's script. It answers a test (`all` false), every match (`all`), one exec
 * from `lastIndex` (`exec`, for JSONata), or a JSON Schema validation (`schema`, the schema's text,
 * and `value`). A thread given `state` and `port` (the synchronous matcher) answers on that port
 * and wakes the waiting thread through `state`.
 */
const MATCHER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { state, port } = workerData ?? {};
const compiled = new Map();
const validators = new Map();
let ajv;
function validation(schema, value) {
  let validate = validators.get(schema);
  if (validate === undefined) {
    // A new Ajv with the cache: Ajv keeps what it compiled (the nested $ids too) for as long as it lives.
    if (validators.size >= ${MAX_THREAD_SCHEMAS} || ajv === undefined) {
      validators.clear();
      ajv = new (require(${JSON.stringify(AJV_PATH)}).Ajv2020)(${JSON.stringify(AJV_OPTIONS)});
    }
    const parsed = JSON.parse(schema);
    // Compiling is timed apart from the check (see COMPILE_BUDGET_MS).
    parentPort.postMessage({ compiling: true });
    try {
      validate = ajv.compile(parsed);
    } catch (error) {
      return { value: { schemaError: String(error && error.message) }, ms: 0 };
    } finally {
      // Out of Ajv's own cache (and its $id unregistered, so the same $id can come changed); a
      // schema whose $id is not a string fails removing as it failed compiling.
      try {
        if (typeof parsed === "object" && parsed !== null) ajv.removeSchema(parsed);
      } catch {}
    }
    validators.set(schema, validate);
    parentPort.postMessage({ compiling: false });
  }
  const started = performance.now();
  const valid = validate(value);
  return { value: { valid, errors: (validate.errors ?? []).slice(0, ${MAX_SCHEMA_ERRORS}) }, ms: performance.now() - started };
}
let jsonata;
const expressions = new Map();
// A value as it can be copied back: functions become undefined (their key kept, as the process
// reads an object's keys), sequences plain arrays; numbers such as NaN and -0 stay as they are.
function copyable(value, seen = new Map()) {
  if (typeof value === "function") return undefined;
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return seen.get(value);
  const copy = Array.isArray(value) ? [] : {};
  seen.set(value, copy);
  if (Array.isArray(value)) for (const item of value) copy.push(copyable(item, seen));
  else for (const key of Object.keys(value)) copy[key] = copyable(value[key], seen);
  return copy;
}
async function expression({ expression, input, limits }) {
  // By its limits too: a route's condition and a node's expression may share a text, not their guardrails.
  const key = JSON.stringify(limits) + expression;
  let compiledExpression = expressions.get(key);
  if (compiledExpression === undefined) {
    jsonata ??= require(${JSON.stringify(JSONATA_PATH)});
    if (expressions.size >= 200) expressions.clear();
    // A regular expression is a plain RegExp here: past the budget the main thread ends this thread.
    compiledExpression = jsonata(expression, limits);
    expressions.set(key, compiledExpression);
  }
  const started = performance.now();
  try {
    return { value: { result: copyable(await compiledExpression.evaluate(input)) }, ms: performance.now() - started };
  } catch (fault) {
    // value and value2 too: JSONata writes an error's message again from its code's template with them.
    const { message, code, position, token, value, value2 } = fault ?? {};
    const primitive = (field) => (["string", "number", "boolean"].includes(typeof field) ? field : undefined);
    return { value: { fault: { message: String(message), code, position, token, value: primitive(value), value2: primitive(value2) } }, ms: performance.now() - started };
  }
}
${firstMatches.toString()}
function matching({ source, flags, text, all, exec, rest, lastIndex }) {
  let pattern = compiled.get(flags + "/" + source);
  if (pattern === undefined) {
    if (compiled.size >= 500) compiled.clear();
    pattern = new RegExp(source, flags);
    compiled.set(flags + "/" + source, pattern);
  }
  pattern.lastIndex = exec ? lastIndex : 0;
  if (exec) {
    const found = [];
    // One match, or (rest) each match from lastIndex on, as a loop of exec calls finds them; a
    // regex that does not move on (not global, or an empty match) ends the list.
    do {
      const match = pattern.exec(text);
      found.push({ match: match === null ? null : { index: match.index, groups: Array.from(match) }, lastIndex: pattern.lastIndex });
      if (match === null || match[0] === "" || !(pattern.global || pattern.sticky)) break;
    } while (rest && found.length < ${MAX_REST_MATCHES});
    return { value: found };
  }
  const started = performance.now();
  const value = all ? firstMatches(pattern, text, ${MAX_MATCHES}, ${MAX_MATCHED_CHARACTERS}) : pattern.test(text);
  return { value, ms: performance.now() - started };
}
parentPort.on("message", async (request) => {
  let reply;
  try {
    reply =
      request.expression !== undefined ? await expression(request)
      : request.schema === undefined ? matching(request)
      : validation(request.schema, request.value);
  } catch (error) {
    reply = { error: String(error && error.message) };
  }
  if (port === undefined) return parentPort.postMessage(reply);
  port.postMessage(reply);
  Atomics.store(state, ${DONE}, 1);
  Atomics.notify(state, ${DONE});
});
if (state !== undefined) {
  // The synchronous matcher runs $toMillis through JSONata: loaded before the thread says it is
  // ready, so loading it (tens of milliseconds, hundreds on a busy machine) counts in the start's
  // budget, not in the first call's.
  jsonata = require(${JSON.stringify(JSONATA_PATH)});
  Atomics.store(state, ${READY}, 1);
  Atomics.notify(state, ${READY});
}
`;

/**
 * What the matches of one step share: STEP_BUDGET_MS of matching time in all (time waiting for a
 * thread is not counted), and the run's signal, which takes its waiting matches out of the queue.
 */
export interface PatternBudget {
  leftMs: number;
  /** What is left of IN_PROCESS_STEPS_PER_STEP. */
  inProcessSteps: number;
  signal: AbortSignal | undefined;
}

/** A step's budget for its patterns. */
export function patternBudget(signal?: AbortSignal): PatternBudget {
  return { leftMs: STEP_BUDGET_MS, inProcessSteps: IN_PROCESS_STEPS_PER_STEP, signal };
}

/**
 * A match whose pattern cannot take more than this many steps over its text (see patternCost)
 * runs in the process: the slowest we built at the limit took 0.43 ms, and most take microseconds,
 * less than a round trip to a thread.
 */
const IN_PROCESS_STEPS = 250_000;
/** The steps one step's in-process matches may take together, a few milliseconds at worst; past that they go to a thread. */
const IN_PROCESS_STEPS_PER_STEP = 2_500_000;
/**
 * What producing one match in the process costs beside its steps, counted as steps (an object and
 * the array of its groups, 0.1-0.6 µs, against a nanosecond or two a step), per group it copies.
 */
const MATCH_STEPS = 200;
/** The patterns whose cost is known, by source: the most recently used 500. */
const knownCosts = new LRUCache<string, PatternCost>({ max: 500 });

/**
 * Whether matching `pattern` over `text` (every match when `all`) is bounded small enough to run
 * in the process, and if so charges its worst case to the step's in-process allowance.
 */
function inProcess(pattern: RegExp, text: string, all: boolean, budget: PatternBudget): boolean {
  let cost = knownCosts.get(pattern.source);
  if (cost === undefined) {
    cost = patternCost(pattern.source);
    knownCosts.set(pattern.source, cost);
  }
  // Every position may start a match, and every match found (up to MAX_MATCHES) is copied out.
  const positions = text.length + 1;
  const worst = positions * cost.steps + (all ? Math.min(positions, MAX_MATCHES) * MATCH_STEPS * (1 + cost.captures) : 0);
  // A stopped run's match, or one of a step whose time is spent, is refused as a thread's would be.
  if (!(worst <= IN_PROCESS_STEPS && worst <= budget.inProcessSteps) || budget.leftMs < 1 || budget.signal?.aborted) return false;
  budget.inProcessSteps -= worst;
  return true;
}

interface Match {
  /** A pattern's test or matches, or a JSON Schema validation (see MATCHER_SOURCE). */
  request:
    | { source: string; flags: string; text: string; all: boolean }
    | { schema: string; value: unknown }
    | { expression: string; input: unknown; limits: ExpressionLimits };
  field: string;
  /** The most time this one request may take: MATCH_BUDGET_MS for a pattern, the step's for a validation. */
  capMs: number;
  /** The error of a request that took all of capMs (one that ran out of the step's budget fails with stepTimeout). */
  timeout(field: string): Error;
  budget: PatternBudget;
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

/** A thread running MATCHER_SOURCE; it does not keep the process alive. */
function matchingThread(options: Pick<WorkerOptions, "workerData" | "transferList"> = {}): Worker {
  const worker = new Worker(MATCHER_SOURCE, {
    ...options,
    eval: true,
    // A regex that builds a huge match list is bounded too.
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });
  worker.unref();
  // A thread ended for its budget reports an error and exits; whoever waits on it learns of it otherwise.
  worker.on("error", () => {});
  return worker;
}

function startMatcher(): Matcher {
  const worker = matchingThread();
  const online = new Promise<void>((resolve, reject) => {
    worker.once("online", resolve);
    worker.once("error", reject);
    worker.once("exit", () => reject(new Error("its thread ended as it started")));
  });
  // Handled where a match waits for it; a thread that failed to start is never reused.
  online.catch(() => {});
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
    let matcher: Matcher;
    try {
      matcher = idle.pop() ?? startMatcher();
    } catch (error) {
      match.reject(new Error(`${match.field}: could not be run in a matching thread: ${(error as Error).message}`));
      continue;
    }
    running++;
    void runOn(matcher, match).finally(() => {
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
    match.reject(new Error(`${match.field}: could not be run in a matching thread: ${(error as Error).message}`));
    return;
  } finally {
    clearTimeout(started);
  }
  // Under a millisecond left is spent: a timer cannot measure less.
  if (match.budget.leftMs < 1) {
    idle.push(matcher);
    match.reject(stepTimeout(match.field));
    return;
  }
  const allowedMs = Math.min(match.capMs, match.budget.leftMs);
  /** The thread is compiling a schema (it says so), on COMPILE_BUDGET_MS rather than the check's budget. */
  let compiling = false;
  // The thread times its own matching, which is what the step is charged: the main thread may be
  // busy elsewhere when the answer arrives. The timer that ends the thread allows for that too.
  const reply = await new Promise<{ value: unknown; ms: number } | { error: string } | "timeout" | "ended">((resolve) => {
    let budget = setTimeout(() => resolve("timeout"), allowedMs + TIMER_SLACK_MS);
    const answered = (message: { value: unknown; ms: number } | { error: string } | { compiling: boolean }) => {
      if (!("compiling" in message)) return settle(message);
      // The thread compiles a schema (COMPILE_BUDGET_MS), then the check has its own budget.
      compiling = message.compiling;
      clearTimeout(budget);
      budget = setTimeout(() => resolve("timeout"), (compiling ? COMPILE_BUDGET_MS : allowedMs) + TIMER_SLACK_MS);
      worker.once("message", answered);
    };
    const ended = () => settle("ended");
    const settle = (result: { value: unknown; ms: number } | { error: string } | "timeout" | "ended") => {
      clearTimeout(budget);
      worker.off("message", answered);
      worker.off("exit", ended);
      resolve(result);
    };
    worker.once("message", answered);
    worker.once("exit", ended);
    try {
      worker.postMessage(match.request);
    } catch (error) {
      // A value that cannot be copied to the thread (a JSONata function): the thread is not told.
      settle({ error: (error as Error).name === "DataCloneError" ? "the value holds something that is not data (a function)" : (error as Error).message });
    }
  });
  match.budget.leftMs -= reply === "timeout" && !compiling ? allowedMs : typeof reply === "object" && "ms" in reply ? reply.ms : 0;
  if (reply === "timeout" || reply === "ended" || "error" in reply) {
    // The thread is ended (interrupting a backtracking regex) or has ended; the next match starts a new one.
    void worker.terminate();
    if (reply === "timeout" && compiling) match.reject(compileTimeout(match.field));
    else if (reply === "timeout") match.reject(allowedMs < match.capMs ? stepTimeout(match.field) : match.timeout(match.field));
    else match.reject(new Error(`${match.field}: could not be run in a matching thread: ${reply === "ended" ? "its thread ended" : reply.error}`));
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

function patternTimeout(field: string): StepError {
  return new StepError("pattern_timeout", `${field}: the pattern took longer than ${MATCH_BUDGET_MS} ms; simplify it (nested repetition backtracks)`, {
    field,
  });
}

function stepTimeout(field: string): StepError {
  return new StepError("pattern_timeout", `${field}: the step's patterns took longer than ${STEP_BUDGET_MS} ms in all; simplify them`, { field });
}

function compileTimeout(field: string): StepError {
  return new StepError("validation_timeout", `${field}: compiling the schema took longer than ${COMPILE_BUDGET_MS / 1000} s; make it smaller`, { field });
}

function validationTimeout(field: string): StepError {
  return new StepError(
    "validation_timeout",
    `${field}: validating took longer than ${STEP_BUDGET_MS} ms; simplify the schema (a pattern with nested repetition backtracks, uniqueItems compares every pair of items)`,
    { field },
  );
}

function run<T>(request: Match["request"], field: string, budget: PatternBudget, capMs: number, timeout: Match["timeout"]): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const { signal } = budget;
    if (signal?.aborted) return reject(signal.reason);
    if (budget.leftMs < 1) return reject(stepTimeout(field));
    const settled = () => signal?.removeEventListener("abort", stopped);
    const match: Match = {
      request,
      field,
      capMs,
      timeout,
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
    // A run that stops (cancelled, its lease lost) takes its matches that wait for a thread out of the queue.
    const stopped = () => {
      const at = waiting.indexOf(match);
      if (at === -1) return;
      waiting.splice(at, 1);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stopped, { once: true });
    waiting.push(match);
    next();
  });
}

/** The first matches of `pattern` in `text` (MAX_MATCHES, MAX_MATCHED_CHARACTERS), within the time budgets (the match's and the step's). */
export function findMatches(pattern: RegExp, text: string, field: string, budget: PatternBudget): Promise<PatternMatch[]> {
  if (inProcess(pattern, text, true, budget)) return Promise.resolve(firstMatches(pattern, text, MAX_MATCHES, MAX_MATCHED_CHARACTERS));
  return run<PatternMatch[]>({ source: pattern.source, flags: pattern.flags, text, all: true }, field, budget, MATCH_BUDGET_MS, patternTimeout);
}

/** Whether `pattern` matches somewhere in `text`, within the time budgets (the match's and the step's). */
export function testPattern(pattern: RegExp, text: string, field: string, budget: PatternBudget): Promise<boolean> {
  if (inProcess(pattern, text, false, budget)) {
    pattern.lastIndex = 0;
    return Promise.resolve(pattern.test(text));
  }
  return run<boolean>({ source: pattern.source, flags: pattern.flags, text, all: false }, field, budget, MATCH_BUDGET_MS, patternTimeout);
}

/** An Ajv error as the matching thread reports it (the fields a step's errors are made of). */
export type SchemaError = Pick<ErrorObject, "instancePath" | "keyword" | "params" | "message">;

/**
 * `value` checked against the JSON Schema `schema` (its text, JSON of an object or a boolean) with
 * AJV_OPTIONS, in a matching thread within the step's budget: compiling a schema takes time, its
 * patterns may backtrack and its uniqueItems compares every pair of items, over values taken from
 * untrusted documents. At most MAX_SCHEMA_ERRORS errors are reported; a schema Ajv cannot compile
 * comes back as `schemaError`, Ajv's message.
 */
export function validateInThread(
  schema: string,
  value: unknown,
  field: string,
  budget: PatternBudget,
): Promise<{ valid: boolean; errors: SchemaError[] } | { schemaError: string }> {
  return run({ schema, value }, field, budget, STEP_BUDGET_MS, validationTimeout);
}

/**
 * How long a JSONata expression runs in the process before it is run again in a matching thread.
 * Nearly every expression (a route's condition, a field picked out) ends in microseconds; one that
 * loops or builds large sequences would otherwise hold the event loop, which other organizations'
 * runs share, for its whole budget.
 */
export const IN_PROCESS_EXPRESSION_MS = 20;

/** JSONata's own guardrails for an evaluation in a matching thread. */
export interface ExpressionLimits {
  timeout: number;
  stack: number;
  sequence?: number;
}

/** A JSONata error as the matching thread reports it. */
export interface ExpressionFault {
  message: string;
  code?: string;
  position?: number;
  token?: string;
  /** What the message names, for JSONata's templates. */
  value?: string | number | boolean;
  value2?: string | number | boolean;
}

/** Past an evaluation's time budget, as JSONata reports its own timeout. */
class ExpressionTimeout extends Error {}

/**
 * Evaluates a JSONata expression over `input` (JSON) in a matching thread, within `limits`: JSONata
 * checks its timeout between its steps, and the thread is ended when a step (a backtracking regex)
 * outlasts it. Its result comes back as JSON; an error (a timeout among them, as JSONata's code
 * D1012) comes back as the fault.
 */
export async function evaluateInThread(
  expression: string,
  input: unknown,
  limits: ExpressionLimits,
  field: string,
): Promise<{ result: unknown } | { fault: ExpressionFault }> {
  const timedOut = () => new ExpressionTimeout(`${field}: the expression took longer than ${limits.timeout} ms`);
  try {
    return await run({ expression, input, limits }, field, { leftMs: limits.timeout, inProcessSteps: 0, signal: undefined }, limits.timeout, timedOut);
  } catch (error) {
    if (error instanceof ExpressionTimeout || (error instanceof StepError && error.code === "pattern_timeout"))
      return { fault: { message: `Evaluation timeout after ${limits.timeout} milliseconds. Check for infinite loop`, code: "D1012" } };
    // The thread could not take it or ended (its memory): an error of the expression all the same.
    return { fault: { message: (error as Error).message } };
  }
}

// JSONata calls a regular expression synchronously (its RegexEngine option: a RegExp-like class
// whose exec it calls), so an expression's regex runs in a thread of its own that this thread
// waits for (Atomics.wait) within the same budget: a backtracking one holds the event loop for
// 250 ms at most, where in-process it held it for as long as it backtracked (hours, for 40 "a"s).

interface SyncMatcher {
  worker: Worker;
  state: Int32Array;
  replies: MessagePort;
}

let syncMatcher: SyncMatcher | undefined;

function startSyncMatcher(): SyncMatcher {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1: replies, port2: port } = new MessageChannel();
  const worker = matchingThread({ workerData: { state, port }, transferList: [port] });
  // Nor does its port keep the process alive.
  replies.unref();
  return { worker, state, replies };
}

/**
 * Ends the thread and starts its successor at once: the next exec would otherwise wait for a new
 * thread to start (about 30 ms, more on a busy machine) with the event loop blocked.
 */
function endSyncMatcher(ended: SyncMatcher): void {
  void ended.worker.terminate();
  ended.replies.close();
  if (syncMatcher !== ended) return;
  syncMatcher = undefined;
  try {
    syncMatcher = startSyncMatcher();
  } catch {
    // No thread to be had now: the next exec tries again, and says why if it still cannot.
  }
}

interface ExecReply {
  match: PatternMatch | null;
  lastIndex: number;
}

/**
 * Sends `request` to the synchronous matcher and waits for its reply (MATCH_BUDGET_MS at most,
 * with the event loop held); past that the thread is ended and the error says that `what` took too
 * long, then gives `advice`.
 */
function askInThread<T>(request: object, what: string, advice = ""): T {
  syncMatcher ??= startSyncMatcher();
  const current = syncMatcher;
  if (Atomics.wait(current.state, READY, 0, START_BUDGET_MS) === "timed-out") {
    endSyncMatcher(current);
    throw new Error(`${what} could not be run: its thread did not start within ${START_BUDGET_MS} ms`);
  }
  Atomics.store(current.state, DONE, 0);
  current.worker.postMessage(request);
  if (Atomics.wait(current.state, DONE, 0, MATCH_BUDGET_MS) === "timed-out") {
    endSyncMatcher(current);
    throw new Error(`${what} took longer than ${MATCH_BUDGET_MS} ms${advice}`);
  }
  const reply = receiveMessageOnPort(current.replies)?.message as { value: T } | { error: string } | undefined;
  if (reply === undefined || "error" in reply) {
    endSyncMatcher(current);
    throw new Error(`${what} could not be run: ${reply?.error ?? "its thread gave no answer"}`);
  }
  return reply.value;
}

function execInThread(source: string, flags: string, text: string, lastIndex: number, rest: boolean): ExecReply[] {
  const request = { source, flags, text, exec: true, rest, lastIndex };
  return askInThread<ExecReply[]>(request, `the regular expression /${source}/`, "; simplify it (nested repetition backtracks)");
}

/** JSONata's own $toMillis, for a timestamp without a picture (ISO 8601: one fixed, linear expression). */
const builtInToMillis = (await jsonata("$toMillis").evaluate({})) as { implementation: (timestamp: string | undefined) => number | undefined };

/** $toMillis: JSONata's own for an ISO 8601 timestamp; with a picture, in a matching thread within its budget. */
function boundedToMillis(timestamp: string | undefined, picture?: string): number | undefined {
  if (timestamp === undefined) return undefined;
  return picture === undefined ? builtInToMillis.implementation(timestamp) : toMillisInThread(timestamp, picture);
}

/**
 * Replaces JSONata's functions that build a regular expression of their own (not through its
 * RegexEngine option) on a compiled expression: with a picture, `$toMillis` matches one in a thread.
 * Every compiled expression of the service goes through here.
 */
export function boundBuiltIns(expression: jsonata.Expression): void {
  expression.registerFunction("toMillis", boundedToMillis, "<s-s?:n>");
}

/**
 * JSONata's `$toMillis(timestamp, picture)`, run in the synchronous matcher: JSONata turns the
 * picture into a regular expression of its own (not through its RegexEngine), one group per
 * component, and `[f][f][f][f][f][f][f][f]` over 40 digits and a letter backtracked for 180 ms, 60
 * digits for minutes. Its value, or JSONata's error for it; an error past MATCH_BUDGET_MS.
 */
function toMillisInThread(timestamp: string, picture: string): number | undefined {
  const reply = askInThread<{ result: number | undefined } | { fault: ExpressionFault }>(
    { expression: "$toMillis(timestamp, picture)", input: { timestamp, picture }, limits: {} },
    "$toMillis with the picture",
  );
  if ("fault" in reply) throw reply.fault;
  return reply.result;
}

/**
 * A regular expression of a JSONata expression, for its RegexEngine option: `exec` and `lastIndex`
 * as a RegExp has them (all JSONata uses), run in a thread within the time budget. JSONata calls
 * exec once (`$contains`), or again and again from where the last match ended (`$match`,
 * `$replace`, `$split`): the second call fetches every match left in one round trip, and the
 * calls after it are answered from that list, so a text is sent to the thread at most twice.
 */
class BoundedRegex {
  lastIndex = 0;
  readonly #source: string;
  readonly #flags: string;
  /** The text of the last exec, and where its match ended. */
  #last: { text: string; lastIndex: number } | undefined;
  /** The matches fetched at the second exec on #last's text, and how many of them were given. */
  #rest: { matches: ExecReply[]; given: number } | undefined;

  constructor(pattern: RegExp) {
    this.#source = pattern.source;
    this.#flags = pattern.flags;
  }

  exec(text: string): RegExpExecArray | null {
    const next = this.#last !== undefined && this.#last.text === text && this.#last.lastIndex === this.lastIndex && this.lastIndex !== 0;
    if (!next) this.#rest = undefined;
    else this.#rest ??= { matches: execInThread(this.#source, this.#flags, text, this.lastIndex, true), given: 0 };
    const { match, lastIndex } =
      this.#rest === undefined ? execInThread(this.#source, this.#flags, text, this.lastIndex, false)[0]! : this.#rest.matches[this.#rest.given++]!;
    this.lastIndex = lastIndex;
    this.#last = { text, lastIndex };
    // The list ends with no match (or one that does not move on): past it, exec asks the thread again.
    if (this.#rest !== undefined && this.#rest.given === this.#rest.matches.length) this.#rest = undefined;
    if (match === null) return null;
    return Object.assign(match.groups as string[], { index: match.index, input: text, groups: undefined }) as RegExpExecArray;
  }
}

/** BoundedRegex as JSONata's RegexEngine option takes it (its type asks for all of RegExp's statics; JSONata constructs it and uses exec and lastIndex only). */
export const JSONATA_REGEX_ENGINE = BoundedRegex as unknown as RegExpConstructor;
