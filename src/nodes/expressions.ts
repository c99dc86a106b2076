import jsonata from "jsonata";
import { LRUCache } from "lru-cache";
import { boundBuiltIns, type ExpressionLimits, evaluateInThread, IN_PROCESS_EXPRESSION_MS, JSONATA_REGEX_ENGINE } from "./patterns.ts";
import { StepError } from "./step-error.ts";

type Expression = ReturnType<typeof jsonata>;

/** Compiled expressions by source text: a pipe's expressions compile once per process, not once per run. */
const compiled = new LRUCache<string, Expression>({ max: 500 });

/**
 * An expression runs over a run's data within these bounds (JSONata's own guardrails): it has loops
 * by recursion and builds sequences, and a pipe's expression must not hold a worker or its memory.
 * It runs IN_PROCESS_EXPRESSION_MS in the process, then again in a matching thread for the rest.
 */
const LIMITS: ExpressionLimits = { timeout: 1000, stack: 200, sequence: 100_000 };
const IN_PROCESS = {
  ...LIMITS,
  timeout: IN_PROCESS_EXPRESSION_MS,
  // Its regular expressions too: JSONata's timeout is checked between steps, never inside a regex.
  RegexEngine: JSONATA_REGEX_ENGINE,
};
/** JSONata's code for an evaluation past its timeout. */
const TIMEOUT_CODE = "D1012";

interface JsonataFault {
  message: string;
  code?: string;
  position?: number;
  token?: string;
}

function faultDetails(field: string, fault: JsonataFault): Record<string, unknown> {
  return {
    field,
    ...(fault.position === undefined ? {} : { position: fault.position }),
    ...(fault.token === undefined ? {} : { token: fault.token }),
    ...(fault.code === undefined ? {} : { jsonataCode: fault.code }),
  };
}

function faultMessage(field: string, fault: JsonataFault): string {
  const at = fault.position === undefined ? "" : ` at position ${fault.position}`;
  return `${field}${at}: ${fault.message}`;
}

/** Compiles a JSONata expression; a syntax error is `expression_invalid` with its position and token. */
export function compileExpression(source: string, field: string): Expression {
  const known = compiled.get(source);
  if (known !== undefined) return known;
  let expression: Expression;
  try {
    expression = jsonata(source, IN_PROCESS);
  } catch (error) {
    const fault = error as JsonataFault;
    throw new StepError("expression_invalid", faultMessage(field, fault), faultDetails(field, fault));
  }
  boundBuiltIns(expression);
  compiled.set(source, expression);
  return expression;
}

/**
 * Evaluates a JSONata expression over `input` (the run data: JSON). An error while evaluating (a type
 * error, the time or depth budget exceeded) is `expression_failed` with its position. A result of
 * nothing is undefined. One that runs past IN_PROCESS_EXPRESSION_MS here is evaluated again from the
 * start in a matching thread, within the whole budget, so the event loop is held that long at most.
 */
export async function evaluateExpression(source: string, field: string, input: unknown): Promise<unknown> {
  const expression = compileExpression(source, field);
  let fault: JsonataFault;
  try {
    return await expression.evaluate(input);
  } catch (error) {
    fault = error as JsonataFault;
  }
  if (fault.code === TIMEOUT_CODE) {
    const outcome = await evaluateInThread(source, input, LIMITS, field);
    if ("result" in outcome) return outcome.result;
    fault = outcome.fault;
  }
  throw new StepError("expression_failed", faultMessage(field, fault), faultDetails(field, fault));
}
