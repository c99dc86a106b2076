import { LRUCache } from "lru-cache";
import type { ValidateNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { evaluateExpression } from "../../sandbox/expressions.ts";
import { patternBudget, type SandboxCaller } from "../../sandbox/pool.ts";
import { type SchemaError, validateInThread } from "../../sandbox/json-schema.ts";
import type { RunData } from "../run-data.ts";
import { StepError } from "../../step-error.ts";

export interface ValidationOutput {
  valid: boolean;
  errors: { path: string; message: string }[];
}

/**
 * The longest schema text a validate node takes. Ajv compiles it in a matching thread when the pipe
 * is saved, and checks it against its meta-schema, which compares the items of a `type` list pair by
 * pair (a 341 KB list took 5 s). At 32 KB the slowest we found, 700 properties each with a pattern,
 * compiles in about 0.3 s.
 */
const MAX_SCHEMA_CHARS = 32 * 1024;

/** The schema's text parsed, within MAX_SCHEMA_CHARS; what is not a schema by its JSON alone is `schema_invalid`. */
function parseSchema(text: string, field: string): object | boolean {
  if (text.length > MAX_SCHEMA_CHARS)
    throw new StepError("schema_invalid", `${field}: a schema is at most ${MAX_SCHEMA_CHARS} characters; this one has ${text.length}`, { field });
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new StepError("schema_invalid", `${field}: not JSON: ${(error as Error).message}`, { field });
  }
  if ((typeof schema !== "object" || schema === null) && typeof schema !== "boolean")
    throw new StepError("schema_invalid", `${field}: a schema is an object or a boolean`, { field });
  return schema;
}

/** Checks a schema's text as a pipe is saved, before it is compiled (see compileSchema): too long, not JSON, not a schema by its JSON alone is `schema_invalid`. */
export function checkSchemaText(text: string, field: string): void {
  parseSchema(text, field);
}

/**
 * Compiles a schema as a pipe is saved, in a matching thread (the event loop is free meanwhile, and
 * the thread keeps it compiled for the runs): a schema Ajv cannot compile is `schema_invalid`, with
 * Ajv's message; one that takes longer than the thread's compile budget is `validation_timeout`.
 */
export async function compileSchema(text: string, field: string): Promise<void> {
  parseSchema(text, field);
  const checked = await validateInThread(text, null, field, patternBudget());
  if ("schemaError" in checked) throw new StepError("schema_invalid", `${field}: ${checked.schemaError}`, { field });
}

/** Schema texts a run has found to be JSON schemas (parseSchema), so each is parsed once per process, not per run. */
const schemaTexts = new LRUCache<string, true>({ max: 200 });

/** An error's JSON Pointer into the checked value; a missing property's path names the property itself. */
function errorPath(error: SchemaError): string {
  const missing = error.keyword === "required" ? (error.params as { missingProperty: string }).missingProperty : undefined;
  const path = missing === undefined ? error.instancePath : `${error.instancePath}/${missing.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  return path === "" ? "/" : path;
}

/**
 * Checks the part of the run data the node selects against its schema. Invalid data fails the step
 * with `validation_failed` (the errors listed) unless the node continues on invalid data. The check
 * runs in a matching thread within the step's budget (`validation_timeout` past it): the schema's
 * patterns and uniqueItems can take far longer than the value's size suggests.
 */
export async function runValidate(node: ValidateNode, runData: RunData, context: SandboxCaller, path = "validate"): Promise<ValidationOutput> {
  const field = `${path}.schema`;
  if (!schemaTexts.has(node.schema)) {
    parseSchema(node.schema, field);
    schemaTexts.set(node.schema, true);
  }
  const value = node.select === "" ? runData : await evaluateExpression(node.select, `${path}.select`, runData, context);
  const checked = await validateInThread(node.schema, value ?? null, field, patternBudget(context));
  if ("schemaError" in checked) throw new StepError("schema_invalid", `${field}: ${checked.schemaError}`, { field });
  const errors = checked.errors.map((error) => ({ path: errorPath(error), message: error.message ?? error.keyword }));
  if (!checked.valid && !node.continueOnInvalid) {
    const listed = errors
      .slice(0, 5)
      .map((error) => `${error.path} ${error.message}`)
      .join("; ");
    throw new StepError("validation_failed", `${errors.length} error(s): ${listed}`, { errors });
  }
  return { valid: checked.valid, errors };
}
