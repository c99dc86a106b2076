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
const ajv = new Ajv2020(AJV_OPTIONS);
/** Compiled schemas by their text: a pipe's schema compiles once per process. */
const compiled = new LRUCache<string, ValidateFunction>({ max: 200 });

/** The schema compiled; bad JSON or an invalid schema is `schema_invalid`, with the schema path at fault. */
export function compileSchema(text: string, field: string): ValidateFunction {
  const known = compiled.get(text);
  if (known !== undefined) return known;
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new StepError("schema_invalid", `${field}: not JSON: ${(error as Error).message}`, { field });
  }
  if (typeof schema !== "object" && typeof schema !== "boolean")
    throw new StepError("schema_invalid", `${field}: a schema is an object or a boolean`, { field });
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema as object);
  } catch (error) {
    throw new StepError("schema_invalid", `${field}: ${(error as Error).message}`, { field });
  } finally {
    // A schema with an $id stays registered in ajv; removed so the same $id can be saved changed.
    if (typeof schema === "object" && schema !== null && "$id" in schema) ajv.removeSchema((schema as { $id: string }).$id);
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
