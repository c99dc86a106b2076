/**
 * A sandbox thread: it runs what pipe authors write (a regular expression, a JSON Schema check, a
 * JSONata expression) off the event loop that serves requests. The pool (pool.ts) sends it one
 * request at a time and ends it when the request outlasts its budget or its heap (THREAD_HEAP_MB).
 */
import { parentPort } from "node:worker_threads";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import jsonata from "jsonata";
import {
  AJV_OPTIONS,
  JSONATA_TIMEOUT_CODE,
  MAX_MATCHED_CHARACTERS,
  MAX_MATCHES,
  MAX_RESULT_CHARACTERS,
  MAX_SCHEMA_ERRORS,
  MAX_STRING_CHARACTERS,
  MAX_THREAD_SCHEMAS,
  RESULT_TOO_LARGE,
  VALUE_TOO_LARGE,
} from "./limits.ts";
import { firstMatches } from "./matches.ts";

/** JSONata's own guardrails for one evaluation. */
export interface ExpressionLimits {
  timeout: number;
  stack: number;
  sequence: number;
}

/** What a thread is asked: a pattern's test or matches, a JSON Schema validation, or an evaluation. */
export type ThreadRequest =
  | { kind: "match"; source: string; flags: string; text: string; all: boolean }
  | { kind: "schema"; schema: string; value: unknown }
  | { kind: "expression"; expression: string; input: unknown; limits: ExpressionLimits };

/**
 * Its answer, with the time the work took in the thread; `ranOutOfTime` when the work stopped itself
 * at its time limit (JSONata's timeout), as the pool would have ended it; `compiling` says a schema
 * is being compiled.
 */
export type ThreadReply = ThreadAnswer | { error: string } | { compiling: boolean };

/** A request's answer (its value, or a fault it reports as a value). */
export type ThreadAnswer = { value: unknown; ms: number; ranOutOfTime?: true };

/** What a thread says once it has loaded, before its first request. */
export interface ThreadReady {
  ready: true;
}

/** A JSONata error as the thread reports it. */
export interface ExpressionFault {
  message: string;
  code?: string;
  position?: number;
  token?: string;
}

const port = parentPort!;
const patterns = new Map<string, RegExp>();
const validators = new Map<string, ValidateFunction>();
let ajv: Ajv2020 | undefined;
const expressions = new Map<string, jsonata.Expression>();

function matching({ source, flags, text, all }: Extract<ThreadRequest, { kind: "match" }>): { value: unknown; ms: number } {
  let pattern = patterns.get(`${flags}/${source}`);
  if (pattern === undefined) {
    if (patterns.size >= 500) patterns.clear();
    pattern = new RegExp(source, flags);
    patterns.set(`${flags}/${source}`, pattern);
  }
  pattern.lastIndex = 0;
  const started = performance.now();
  const value = all ? firstMatches(pattern, text, MAX_MATCHES, MAX_MATCHED_CHARACTERS) : pattern.test(text);
  return { value, ms: performance.now() - started };
}

function validation({ schema, value }: Extract<ThreadRequest, { kind: "schema" }>): { value: unknown; ms: number } {
  let validate = validators.get(schema);
  if (validate === undefined) {
    // A new Ajv with the cache: Ajv keeps what it compiled (the nested $ids too) for as long as it lives.
    if (validators.size >= MAX_THREAD_SCHEMAS || ajv === undefined) {
      validators.clear();
      ajv = new Ajv2020(AJV_OPTIONS);
    }
    const parsed: unknown = JSON.parse(schema);
    // Compiling is timed apart from the check (see COMPILE_BUDGET_MS in pool.ts).
    port.postMessage({ compiling: true });
    try {
      validate = ajv.compile(parsed as object);
    } catch (error) {
      return { value: { schemaError: String((error as Error | undefined)?.message) }, ms: 0 };
    } finally {
      // Out of Ajv's own cache (and its $id unregistered, so the same $id can come changed); a
      // schema whose $id is not a string fails removing as it failed compiling.
      try {
        if (typeof parsed === "object" && parsed !== null) ajv.removeSchema(parsed);
      } catch {}
    }
    validators.set(schema, validate);
    port.postMessage({ compiling: false });
  }
  const started = performance.now();
  const valid = validate(value);
  return { value: { valid, errors: (validate.errors ?? []).slice(0, MAX_SCHEMA_ERRORS) }, ms: performance.now() - started };
}

/** What a string past MAX_STRING_CHARACTERS fails with, as a JSONata error of its own code. */
function valueTooLarge(): ExpressionFault {
  return { message: "", code: VALUE_TOO_LARGE };
}

function checkLength(characters: number): void {
  if (characters > MAX_STRING_CHARACTERS) throw valueTooLarge();
}

// JSONata's `&` (and its $replace, and the rest of its string building) joins with concat: this
// thread's concat refuses a string past the limit before building it.
const concat = String.prototype.concat;
String.prototype.concat = function (this: string, ...parts: unknown[]): string {
  let characters = this.length;
  for (const part of parts) characters += typeof part === "string" ? part.length : String(part).length;
  checkLength(characters);
  return concat.apply(this, parts as string[]);
};

/**
 * JSONata's functions that take or build strings, checked before they run: no string argument past
 * MAX_STRING_CHARACTERS (so none is copied whole, as $uppercase does), nor a `$pad` width or a
 * `$join`ed length past it (they build with Array.join, not concat).
 */
const STRING_FUNCTIONS = [
  "pad",
  "join",
  "string",
  "substring",
  "substringBefore",
  "substringAfter",
  "lowercase",
  "uppercase",
  "trim",
  "length",
  "contains",
  "split",
  "match",
  "replace",
  "base64encode",
  "base64decode",
  "encodeUrlComponent",
  "encodeUrl",
  "decodeUrlComponent",
  "decodeUrl",
  "eval",
  "number",
  "formatNumber",
  "parseInteger",
  "toMillis",
];

interface BuiltIn {
  implementation: (...args: unknown[]) => unknown;
  signature: { definition: string };
}

const builtIns = new Map<string, BuiltIn>();
for (const name of STRING_FUNCTIONS) builtIns.set(name, (await jsonata(`$${name}`).evaluate({})) as BuiltIn);

function checkedArguments(name: string, args: unknown[]): void {
  for (const arg of args) if (typeof arg === "string") checkLength(arg.length);
  if (name === "pad" && typeof args[1] === "number") checkLength(Math.abs(args[1]));
  if (name === "join" && Array.isArray(args[0])) {
    const separator = typeof args[1] === "string" ? args[1].length : 0;
    checkLength(args[0].reduce((characters: number, item: unknown) => characters + String(item).length + separator, 0));
  }
}

function boundBuiltIns(expression: jsonata.Expression): void {
  for (const [name, builtIn] of builtIns) {
    expression.registerFunction(
      name,
      function (this: unknown, ...args: unknown[]) {
        checkedArguments(name, args);
        return builtIn.implementation.apply(this, args);
      },
      builtIn.signature.definition,
    );
  }
}

/** Thrown by copyable past MAX_RESULT_CHARACTERS. */
class ResultTooLarge extends Error {}

/**
 * A value as it can be copied back: functions become undefined (their key kept, as the process
 * reads an object's keys), sequences plain arrays; numbers such as NaN and -0 stay as they are.
 * Its strings and keys are counted against MAX_RESULT_CHARACTERS.
 */
function copyable(value: unknown, size: { characters: number }, seen = new Map<object, unknown>()): unknown {
  if (typeof value === "function") return undefined;
  if (typeof value === "string") {
    size.characters += value.length;
    if (size.characters > MAX_RESULT_CHARACTERS) throw new ResultTooLarge();
  }
  if (value === null || typeof value !== "object") return value;
  if (seen.has(value)) return seen.get(value);
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(copyable(item, size, seen));
    return copy;
  }
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const [key, item] of Object.entries(value)) copy[copyable(key, size, seen) as string] = copyable(item, size, seen);
  return copy;
}

async function evaluation({ expression, input, limits }: Extract<ThreadRequest, { kind: "expression" }>): Promise<ThreadAnswer> {
  // By its limits too: two callers may share a text, not their guardrails.
  const key = JSON.stringify(limits) + expression;
  let compiled = expressions.get(key);
  if (compiled === undefined) {
    if (expressions.size >= 200) expressions.clear();
    // Its regular expressions are plain RegExps here: past the budget the pool ends this thread.
    compiled = jsonata(expression, limits);
    boundBuiltIns(compiled);
    expressions.set(key, compiled);
  }
  const started = performance.now();
  try {
    const result: unknown = await compiled.evaluate(input);
    return { value: { result: copyable(result, { characters: 0 }) }, ms: performance.now() - started };
  } catch (error) {
    const ms = performance.now() - started;
    if (error instanceof ResultTooLarge) return { value: { fault: { message: "", code: RESULT_TOO_LARGE } }, ms };
    // Past its time however the error came ($eval wraps a timeout in an error of its own): a time limit.
    if (ms >= limits.timeout || wrapsTimeout(error)) return { value: { fault: { message: "", code: JSONATA_TIMEOUT_CODE } }, ms, ranOutOfTime: true };
    const { message, code, position, token } = (error ?? {}) as Partial<Record<keyof ExpressionFault, unknown>>;
    const fault: ExpressionFault = { message: String(message) };
    if (typeof code === "string") fault.code = code;
    if (typeof position === "number") fault.position = position;
    if (typeof token === "string") fault.token = token;
    return { value: { fault }, ms };
  }
}

/** Whether JSONata's error, or one it wraps (`$eval` throws D3121 with the cause as `error`), is its timeout. */
function wrapsTimeout(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Object && depth < 10; cause = (cause as { error?: unknown }).error, depth++) {
    if ((cause as { code?: unknown }).code === JSONATA_TIMEOUT_CODE) return true;
  }
  return false;
}

port.on("message", async (request: ThreadRequest) => {
  let reply: ThreadReply;
  try {
    reply = request.kind === "expression" ? await evaluation(request) : request.kind === "match" ? matching(request) : validation(request);
  } catch (error) {
    reply = { error: String((error as Error | undefined)?.message) };
  }
  port.postMessage(reply);
});
// Loaded (JSONata, Ajv, the built-ins above): a request's budget starts from here, not from its start.
port.postMessage({ ready: true });
