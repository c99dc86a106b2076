import { LRUCache } from "lru-cache";
import { StepError } from "../step-error.ts";
import { MAX_MATCHED_CHARACTERS, MAX_MATCHES, THREAD_HEAP_MB } from "./limits.ts";
import { firstMatches, type PatternMatch } from "./matches.ts";
import { type PatternCost, patternCost } from "./pattern-steps.ts";
import { type LimitErrors, type PatternBudget, runInThread } from "./pool.ts";

/**
 * A pipe's regular expression runs in a sandbox thread (pool.ts) within MATCH_BUDGET_MS, unless its
 * pattern is bounded over its text (no unbounded repetition, few enough steps: see inProcess), which
 * most are. Not a vm script with a timeout: that starts a watchdog thread for every match (about
 * 0.4 ms each, on every run's classify and extract steps) and blocks the event loop until it ends.
 */
const MATCH_BUDGET_MS = 250;

/**
 * A match whose pattern cannot take more than this many steps over its text (see patternCost)
 * runs in the process: the slowest we built at the limit took 0.43 ms, and most take microseconds,
 * less than a round trip to a thread.
 */
const IN_PROCESS_STEPS = 250_000;
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

/** A pipe's pattern compiled case-insensitively with Unicode semantics; `field` names it in the error. */
export function compilePattern(source: string, field: string): RegExp {
  try {
    return new RegExp(source, "giu");
  } catch (error) {
    throw new StepError("pattern_invalid", `${field}: ${(error as Error).message}`, { field });
  }
}

const PATTERN_LIMITS: LimitErrors = {
  timeout: (field) =>
    new StepError("pattern_timeout", `${field}: the pattern took longer than ${MATCH_BUDGET_MS} ms; simplify it (nested repetition backtracks)`, { field }),
  memory: (field) => new StepError("pattern_timeout", `${field}: the pattern's matches took more than ${THREAD_HEAP_MB} MiB; simplify it`, { field }),
};

/** The first matches of `pattern` in `text` (MAX_MATCHES, MAX_MATCHED_CHARACTERS), within the time budgets (the match's and the step's). */
export function findMatches(pattern: RegExp, text: string, field: string, budget: PatternBudget): Promise<PatternMatch[]> {
  if (inProcess(pattern, text, true, budget)) return Promise.resolve(firstMatches(pattern, text, MAX_MATCHES, MAX_MATCHED_CHARACTERS));
  return runInThread({ kind: "match", source: pattern.source, flags: pattern.flags, text, all: true }, field, budget, MATCH_BUDGET_MS, PATTERN_LIMITS);
}

/** Whether `pattern` matches somewhere in `text`, within the time budgets (the match's and the step's). */
export function testPattern(pattern: RegExp, text: string, field: string, budget: PatternBudget): Promise<boolean> {
  if (inProcess(pattern, text, false, budget)) {
    pattern.lastIndex = 0;
    return Promise.resolve(pattern.test(text));
  }
  return runInThread({ kind: "match", source: pattern.source, flags: pattern.flags, text, all: false }, field, budget, MATCH_BUDGET_MS, PATTERN_LIMITS);
}
