import jsonata from "jsonata";
import { LRUCache } from "lru-cache";
import { JSONATA_REGEX_ENGINE } from "./patterns.ts";
import { StepError } from "./step-error.ts";

type Expression = ReturnType<typeof jsonata>;

/** Compiled expressions by source text: a pipe's expressions compile once per process, not once per run. */
const compiled = new LRUCache<string, Expression>({ max: 500 });

/**
 * An expression runs over a run's data within these bounds (JSONata's own guardrails): it has loops
 * by recursion and builds sequences, and a pipe's expression must not hold a worker or its memory.
 */
const BUDGET = {
  timeout: 1000,
  stack: 200,
  sequence: 100_000,
  // Its regular expressions too: JSONata's timeout is checked between steps, never inside a regex.
  RegexEngine: JSONATA_REGEX_ENGINE,
};

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
    expression = jsonata(source, BUDGET);
  } catch (error) {
    const fault = error as JsonataFault;
    throw new StepError("expression_invalid", faultMessage(field, fault), faultDetails(field, fault));
  }
  compiled.set(source, expression);
  return expression;
}

/**
 * Evaluates a JSONata expression over `input`. An error while evaluating (a type error, the time or
 * depth budget exceeded) is `expression_failed` with its position. A result of nothing is undefined.
 */
export async function evaluateExpression(source: string, field: string, input: unknown, bindings: Record<string, unknown> = {}): Promise<unknown> {
  const expression = compileExpression(source, field);
  try {
    return await expression.evaluate(input, bindings);
  } catch (error) {
    const fault = error as JsonataFault;
    throw new StepError("expression_failed", faultMessage(field, fault), faultDetails(field, fault));
  }
}
