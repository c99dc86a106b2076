import { createContext, Script } from "node:vm";
import { StepError } from "./step-error.ts";

/**
 * Regular expressions come from pipe authors and run over untrusted documents, so one with
 * catastrophic backtracking must not hold the worker's event loop: every match runs in a vm script
 * with a time budget (V8 interrupts a backtracking regex when the budget ends).
 */
const MATCH_BUDGET_MS = 250;
const context = createContext({ pattern: undefined as RegExp | undefined, text: "" });
const matchAll = new Script("Array.from(text.matchAll(pattern), (m) => ({ index: m.index, groups: Array.from(m) }))");
const testOnce = new Script("pattern.test(text)");

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

function run<T>(script: Script, pattern: RegExp, text: string, field: string): T {
  context.pattern = pattern;
  context.text = text;
  try {
    return script.runInContext(context, { timeout: MATCH_BUDGET_MS }) as T;
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
      throw new StepError("pattern_timeout", `${field}: the pattern took longer than ${MATCH_BUDGET_MS} ms; simplify it (nested repetition backtracks)`, {
        field,
      });
    }
    throw error;
  } finally {
    context.pattern = undefined;
    context.text = "";
  }
}

/** Every match of `pattern` in `text`, within the time budget. */
export function findMatches(pattern: RegExp, text: string, field: string): PatternMatch[] {
  pattern.lastIndex = 0;
  return run<PatternMatch[]>(matchAll, pattern, text, field);
}

/** Whether `pattern` matches somewhere in `text`, within the time budget. */
export function testPattern(pattern: RegExp, text: string, field: string): boolean {
  pattern.lastIndex = 0;
  return run<boolean>(testOnce, pattern, text, field);
}
