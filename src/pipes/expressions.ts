import jsonata from "jsonata";
import { boundBuiltIns, evaluateInThread, IN_PROCESS_EXPRESSION_MS, JSONATA_REGEX_ENGINE } from "../nodes/patterns.ts";

/** An expression is a condition, not a program: the bound keeps saving and compiling cheap. */
export const MAX_EXPRESSION_LENGTH = 4096;
/** Budgets of one evaluation: JSONata has no loops, but a recursive function can run for ever. */
const EVALUATION_TIMEOUT_MS = 1000;
const MAX_EVALUATION_DEPTH = 500;
/** Compiled expressions kept for reuse (a route evaluates the same few expressions for every run). */
const MAX_CACHED = 500;
/** JSONata's codes for an evaluation past its timeout and past its depth, in a matching thread. */
const TIMEOUT_CODE = "D1012";
const STACK_CODE = "D1011";
/** The binding through which each evaluation finds its own budget (a compiled expression is shared). */
const BUDGET = "__docpipe_budget";

/** A JSONata error: its message and the character position it concerns (0 when JSONata gives none). */
export class ExpressionError extends Error {
  override name = "ExpressionError";
  readonly position: number;

  constructor(message: string, position: number) {
    super(message);
    this.position = position;
  }
}

interface JsonataFailure {
  message?: string;
  position?: number;
}

function expressionError(error: unknown): ExpressionError {
  const failure = (typeof error === "object" && error !== null ? error : {}) as JsonataFailure;
  return new ExpressionError(failure.message ?? String(error), typeof failure.position === "number" ? failure.position : 0);
}

interface Budget {
  deadline: number;
  depth: number;
}

const TOO_DEEP = `the expression nests deeper than ${MAX_EVALUATION_DEPTH} calls`;
const TOO_LONG = `the expression took longer than ${EVALUATION_TIMEOUT_MS} ms`;
/** What checkBudget throws past the time in the process: the evaluation goes on in a matching thread. */
const IN_PROCESS_TIME_SPENT = { message: TOO_LONG };

function checkBudget(budget: Budget): void {
  if (budget.depth > MAX_EVALUATION_DEPTH) throw { message: TOO_DEEP };
  if (Date.now() > budget.deadline) throw IN_PROCESS_TIME_SPENT;
}

const compiled = new Map<string, jsonata.Expression>();

/** The compiled expression (cached); throws an ExpressionError for a syntax error. */
export function compileExpression(text: string): jsonata.Expression {
  const cached = compiled.get(text);
  if (cached !== undefined) return cached;
  if (text.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError(`an expression has at most ${MAX_EXPRESSION_LENGTH} characters`, 0);
  let expression: jsonata.Expression;
  try {
    // A regular expression runs within its own budget: the time budget below is checked between steps, never inside one.
    expression = jsonata(text, { RegexEngine: JSONATA_REGEX_ENGINE });
  } catch (error) {
    throw expressionError(error);
  }
  boundBuiltIns(expression);
  // JSONata calls these around every evaluation step; they find the evaluation's own budget through its bindings.
  expression.assign(Symbol.for("jsonata.__evaluate_entry") as unknown as string, (_node: unknown, _input: unknown, environment: jsonata.Environment) => {
    const budget = environment.lookup(BUDGET) as Budget | undefined;
    if (budget === undefined) return;
    budget.depth++;
    checkBudget(budget);
  });
  expression.assign(Symbol.for("jsonata.__evaluate_exit") as unknown as string, (_node: unknown, _input: unknown, environment: jsonata.Environment) => {
    const budget = environment.lookup(BUDGET) as Budget | undefined;
    if (budget !== undefined) budget.depth--;
  });
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(text, expression);
  return expression;
}

/**
 * Evaluates the expression over `data` (JSON) within its time and depth budgets; throws an
 * ExpressionError. One that runs past IN_PROCESS_EXPRESSION_MS here is evaluated again from the start
 * in a matching thread, within the whole budget, so the event loop is held that long at most.
 */
export async function evaluateExpression(text: string, data: unknown): Promise<unknown> {
  const expression = compileExpression(text);
  try {
    return await expression.evaluate(data, { [BUDGET]: { deadline: Date.now() + IN_PROCESS_EXPRESSION_MS, depth: 0 } });
  } catch (error) {
    if (error !== IN_PROCESS_TIME_SPENT) throw expressionError(error);
  }
  const outcome = await evaluateInThread(text, data, { timeout: EVALUATION_TIMEOUT_MS, stack: MAX_EVALUATION_DEPTH }, "the expression");
  if ("result" in outcome) return outcome.result;
  if (outcome.fault.code === TIMEOUT_CODE) throw new ExpressionError(TOO_LONG, 0);
  if (outcome.fault.code === STACK_CODE) throw new ExpressionError(TOO_DEEP, 0);
  throw expressionError(outcome.fault);
}

/** JSONata's $boolean: what a condition's value counts as. */
export function isTrue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (Array.isArray(value)) return value.some(isTrue);
  if (typeof value === "string") return value.length > 0;
  if (typeof value === "number") return value !== 0;
  if (typeof value === "boolean") return value;
  if (typeof value === "function") return false;
  return Object.keys(value).length > 0;
}

/** Whether the condition holds over `data`; throws an ExpressionError. */
export async function conditionHolds(text: string, data: unknown): Promise<boolean> {
  return isTrue(await evaluateExpression(text, data));
}
