import jsonata from "jsonata";
import { LRUCache } from "lru-cache";
import { StepError } from "../step-error.ts";
import { JSONATA_TIMEOUT_CODE, MAX_RESULT_CHARACTERS, MAX_STRING_CHARACTERS, RESULT_TOO_LARGE, THREAD_HEAP_MB, VALUE_TOO_LARGE } from "./limits.ts";
import { type LimitErrors, runInThread, type SandboxCaller } from "./pool.ts";
import type { ExpressionFault, ExpressionLimits } from "./thread.ts";

/**
 * Every JSONata expression of a pipe (a route's or a review's condition, a transform, a validate
 * node's select, an HTTP request's URL and body, an email's fields) is evaluated here, within one
 * set of limits: EXPRESSION_TIME_MS in all, JSONata's depth and sequence guardrails, THREAD_HEAP_MB
 * for what it builds and MAX_RESULT_CHARACTERS for its result. An expression that can only read its
 * input (see isBounded) runs in the process for IN_PROCESS_MS at most, then again in a sandbox thread;
 * any other runs in a sandbox thread from the start, ended at its budget or its heap: JSONata checks
 * its timeout between its steps only, and one built-in (`$pad("", 30000000, "x")`) runs for seconds.
 */

/** An expression is a condition or a mapping, not a program: the bound keeps saving and compiling cheap. */
export const MAX_EXPRESSION_LENGTH = 4096;
/** The time one evaluation may take, in the process and in a thread together. */
const EXPRESSION_TIME_MS = 1000;
/** How long a bounded expression runs in the process before it is run again in a thread. */
const IN_PROCESS_MS = 20;
/** JSONata's own guardrails: calls nested (a recursion), items in one sequence. */
const LIMITS: ExpressionLimits = { timeout: EXPRESSION_TIME_MS, stack: 500, sequence: 100_000 };
const IN_PROCESS = { ...LIMITS, timeout: IN_PROCESS_MS };

type Expression = ReturnType<typeof jsonata>;

interface Compiled {
  expression: Expression;
  /** Whether it may start in the process (see isBounded). */
  bounded: boolean;
}

/** Compiled expressions by source text: a pipe's expressions compile once per process, not once per run. */
const compiled = new LRUCache<string, Compiled>({ max: 500 });

/**
 * Functions that read what they are given and build at most a copy of one of its values: a step of
 * them costs time linear in one input value, never more than it.
 */
const BOUNDED_FUNCTIONS = new Set([
  "exists",
  "count",
  "length",
  "contains",
  "not",
  "boolean",
  "number",
  "lowercase",
  "uppercase",
  "trim",
  "sum",
  "max",
  "min",
  "average",
  "abs",
  "floor",
  "ceil",
  "round",
]);
/** Operators that compare or compute over values they are given (not `&`, which builds, nor `..`, a range). */
const BOUNDED_OPERATORS = new Set(["=", "!=", "<", "<=", ">", ">=", "and", "or", "in", "+", "-", "*", "/", "%"]);

interface AstNode {
  type: string;
  value?: unknown;
  steps?: AstNode[];
  stages?: AstNode[];
  expr?: AstNode;
  lhs?: AstNode;
  rhs?: AstNode;
  expression?: AstNode;
  expressions?: AstNode[];
  condition?: AstNode;
  then?: AstNode;
  else?: AstNode;
  arguments?: AstNode[];
  procedure?: AstNode;
  group?: unknown;
  focus?: unknown;
  index?: unknown;
  tuple?: unknown;
}

/**
 * Whether an expression can only read its input: paths (no `$$`, no `%`, no `**`), filters,
 * literals, comparisons, arithmetic, conditions and BOUNDED_FUNCTIONS; no constructor, no `&`, no
 * range, no variable, no function of its own, no regular expression. What it builds at once is
 * then a few of its input's values, and each of its steps takes time linear in one of them, so
 * JSONata's timeout (checked between steps) holds in the process. A route's condition is nearly
 * always one (`read.text ~> $contains('Invoice')`, `file.format = 'png'`).
 */
function isBounded(node: AstNode | undefined): boolean {
  if (node === undefined) return true;
  if (node.group !== undefined || node.focus !== undefined || node.index !== undefined || node.tuple !== undefined) return false;
  if (!(node.stages ?? []).every((stage) => stage.type === "filter" && isBounded(stage.expr))) return false;
  switch (node.type) {
    case "string":
    case "number":
    case "value":
    case "name":
    case "wildcard":
      return true;
    case "variable":
      return node.value === "";
    case "path":
      return node.steps!.every(isBounded);
    case "binary":
      return BOUNDED_OPERATORS.has(node.value as string) && isBounded(node.lhs) && isBounded(node.rhs);
    case "unary":
      return node.value === "-" && isBounded(node.expression);
    case "condition":
      return isBounded(node.condition) && isBounded(node.then) && isBounded(node.else);
    case "block":
      return node.expressions!.every(isBounded);
    case "function":
      return node.procedure?.type === "variable" && BOUNDED_FUNCTIONS.has(node.procedure.value as string) && node.arguments!.every(isBounded);
    case "apply":
      return node.rhs?.type === "function" && isBounded(node.lhs) && isBounded(node.rhs);
    default:
      return false;
  }
}

function faultDetails(field: string, fault: ExpressionFault): Record<string, unknown> {
  return {
    field,
    ...(fault.position === undefined ? {} : { position: fault.position }),
    ...(fault.token === undefined ? {} : { token: fault.token }),
    ...(fault.code === undefined ? {} : { jsonataCode: fault.code }),
  };
}

function faultMessage(field: string, fault: ExpressionFault): string {
  const at = fault.position === undefined ? "" : ` at position ${fault.position}`;
  return `${field}${at}: ${fault.message}`;
}

function tooLong(field: string): StepError {
  return new StepError("expression_failed", `${field}: the expression took longer than ${EXPRESSION_TIME_MS} ms, the time limit of an expression`, {
    field,
    limit: "time",
  });
}

const EXPRESSION_LIMITS: LimitErrors = {
  timeout: tooLong,
  memory: (field) =>
    new StepError("expression_failed", `${field}: the expression built more than ${THREAD_HEAP_MB} MiB of values, the memory limit of an expression`, {
      field,
      limit: "memory",
    }),
};

/**
 * Compiles a JSONata expression (cached); a syntax error is `expression_invalid` with its position,
 * its token and JSONata's message (`jsonataMessage`).
 */
export function compileExpression(source: string, field: string): Expression {
  return compiledExpression(source, field).expression;
}

function compiledExpression(source: string, field: string): Compiled {
  const known = compiled.get(source);
  if (known !== undefined) return known;
  let expression: Expression;
  try {
    expression = jsonata(source, IN_PROCESS);
  } catch (error) {
    const fault = error as ExpressionFault;
    throw new StepError("expression_invalid", faultMessage(field, fault), { ...faultDetails(field, fault), jsonataMessage: fault.message });
  }
  const entry = { expression, bounded: isBounded(expression.ast() as AstNode) };
  compiled.set(source, entry);
  return entry;
}

/**
 * Evaluates a JSONata expression over `input` (the run data: JSON). An error while evaluating (a type
 * error, a limit exceeded: see the top of this file) is `expression_failed` with its position or
 * the limit it names. A result of nothing is undefined. `caller` names whose work it is (its share of
 * the sandbox threads) and takes it out of the threads' queue when the run stops.
 */
export async function evaluateExpression(source: string, field: string, input: unknown, caller?: SandboxCaller): Promise<unknown> {
  const { expression, bounded } = compiledExpression(source, field);
  if (bounded) {
    try {
      return await expression.evaluate(input);
    } catch (error) {
      const fault = error as ExpressionFault;
      if (fault.code !== JSONATA_TIMEOUT_CODE) throw new StepError("expression_failed", faultMessage(field, fault), faultDetails(field, fault));
    }
  }
  const budget = { leftMs: EXPRESSION_TIME_MS, inProcessSteps: 0, signal: caller?.signal, organizationId: caller?.organizationId };
  const outcome = await runInThread<{ result: unknown } | { fault: ExpressionFault }>(
    { kind: "expression", expression: source, input, limits: LIMITS },
    field,
    budget,
    EXPRESSION_TIME_MS,
    EXPRESSION_LIMITS,
  );
  if ("result" in outcome) return outcome.result;
  const { fault } = outcome;
  if (fault.code === JSONATA_TIMEOUT_CODE) throw tooLong(field);
  if (fault.code === RESULT_TOO_LARGE)
    throw new StepError(
      "expression_failed",
      `${field}: the expression's result holds more than ${MAX_RESULT_CHARACTERS / 1024 / 1024} Mi characters, the size limit of an expression's result`,
      { field, limit: "result" },
    );
  if (fault.code === VALUE_TOO_LARGE)
    throw new StepError(
      "expression_failed",
      `${field}: the expression built a string of more than ${MAX_STRING_CHARACTERS / 1024 / 1024} Mi characters, the size limit of a value`,
      { field, limit: "value" },
    );
  throw new StepError("expression_failed", faultMessage(field, fault), faultDetails(field, fault));
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

/** Whether the condition (a route's, a review's) holds over `data`; its errors are evaluateExpression's. */
export async function conditionHolds(source: string, field: string, data: unknown, caller?: SandboxCaller): Promise<boolean> {
  return isTrue(await evaluateExpression(source, field, data, caller));
}
