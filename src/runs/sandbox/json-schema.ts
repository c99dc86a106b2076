import type { ErrorObject } from "ajv";
import { StepError } from "../step-error.ts";
import { THREAD_HEAP_MB } from "./limits.ts";
import { type LimitErrors, type PatternBudget, runInThread, STEP_BUDGET_MS } from "./pool.ts";

/** An Ajv error as the sandbox thread reports it (the fields a step's errors are made of). */
export type SchemaError = Pick<ErrorObject, "instancePath" | "keyword" | "params" | "message">;

const SCHEMA_LIMITS: LimitErrors = {
  timeout: (field) =>
    new StepError(
      "validation_timeout",
      `${field}: validating took longer than ${STEP_BUDGET_MS} ms; simplify the schema (a pattern with nested repetition backtracks, uniqueItems compares every pair of items)`,
      { field },
    ),
  memory: (field) => new StepError("validation_timeout", `${field}: validating took more than ${THREAD_HEAP_MB} MiB; simplify the schema`, { field }),
};

/**
 * `value` checked against the JSON Schema `schema` (its text, JSON of an object or a boolean) with
 * AJV_OPTIONS, in a sandbox thread within the step's budget: compiling a schema takes time, its
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
  return runInThread({ kind: "schema", schema, value }, field, budget, STEP_BUDGET_MS, SCHEMA_LIMITS);
}
