import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { LRUCache } from "lru-cache";
import type { ValidateNode } from "../../gen/docpipe/v1/pipe_pb.js";
import { evaluateExpression } from "./expressions.ts";
import { AJV_OPTIONS, patternBudget, type SchemaError, validateInThread } from "./patterns.ts";
import type { NodeContext, RunData } from "./run-data.ts";
import { StepError } from "./step-error.ts";

export interface ValidationOutput {
  valid: boolean;
  errors: { path: string; message: string }[];
}

/** Compiles schemas to find what is wrong with them; values are checked in a matching thread (see runValidate). */
let ajv = new Ajv2020(AJV_OPTIONS);
/** Compiled schemas by their text: a pipe's schema compiles once per process. */
const compiled = new LRUCache<string, ValidateFunction>({ max: 200 });
/** Schemas compiled by this Ajv; a new one starts after as many as the cache holds (Ajv keeps nested $ids for as long as it lives). */
let compiledByAjv = 0;
/**
 * The longest schema text a validate node takes. Ajv compiles in the process (to report what is
 * wrong with a schema, when a pipe is saved), and checks a schema against its meta-schema, which
 * compares the items of a `type` list pair by pair: a 341 KB list took 5 s, 32 KB takes well under a tenth of that.
 */
const MAX_SCHEMA_CHARS = 32 * 1024;

/** The schema compiled; bad JSON or an invalid schema is `schema_invalid`, with the schema path at fault. */
export function compileSchema(text: string, field: string): ValidateFunction {
  const known = compiled.get(text);
  if (known !== undefined) return known;
  if (text.length > MAX_SCHEMA_CHARS)
    throw new StepError("schema_invalid", `${field}: a schema is at most ${MAX_SCHEMA_CHARS} characters; this one has ${text.length}`, { field });
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new StepError("schema_invalid", `${field}: not JSON: ${(error as Error).message}`, { field });
  }
  if (typeof schema !== "object" && typeof schema !== "boolean")
    throw new StepError("schema_invalid", `${field}: a schema is an object or a boolean`, { field });
  if (++compiledByAjv > compiled.max) {
    ajv = new Ajv2020(AJV_OPTIONS);
    compiledByAjv = 1;
  }
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw new StepError("schema_invalid", `${field}: ${(error as Error).message}`, { field });
  } finally {
    // Out of Ajv's own cache (and its $id unregistered, so the same $id can be saved changed).
    if (typeof schema === "object" && schema !== null) ajv.removeSchema(schema);
  }
  compiled.set(text, validate);
  return validate;
}

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
export async function runValidate(node: ValidateNode, runData: RunData, context: NodeContext, path = "validate"): Promise<ValidationOutput> {
  compileSchema(node.schema, `${path}.schema`);
  const value = node.select === "" ? runData : await evaluateExpression(node.select, `${path}.select`, runData);
  const checked = await validateInThread(node.schema, value ?? null, `${path}.schema`, patternBudget(context.signal));
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
