import { compileExpression, MAX_EXPRESSION_LENGTH } from "../sandbox/expressions.ts";
import { StepError } from "../step-error.ts";

export function requireText(value: string, field: string, what: string): void {
  if (value.trim() === "") throw new StepError("settings_invalid", `${field}: ${what} is required`, { field });
}

/** The longest keyword or label, in characters and in words. */
const MAX_PHRASE_LENGTH = 100;
const MAX_PHRASE_WORDS = 8;

/**
 * A keyword or label is looked for at every position of a document's text, word by word (any run
 * of space between its words), so its length multiplies the text's: a 200-word keyword over a
 * 120,000-character text held the event loop 155 ms, 2,000 words 7.5 s. Within these limits a
 * megabyte of hostile text takes about 17 ms.
 */
export function checkPhrase(phrase: string, field: string): void {
  requireText(phrase, field, "a keyword or label");
  if (phrase.length > MAX_PHRASE_LENGTH || phrase.trim().split(/\s+/).length > MAX_PHRASE_WORDS) {
    throw new StepError("settings_invalid", `${field}: a keyword or label is at most ${MAX_PHRASE_LENGTH} characters and ${MAX_PHRASE_WORDS} words`, {
      field,
    });
  }
}

export function checkCurrency(currency: string, field: string): void {
  if (currency !== "" && !/^[A-Za-z]{3}$/.test(currency)) throw new StepError("settings_invalid", `${field}: must be an ISO 4217 code such as EUR`, { field });
}

/** A pipeline is a short chain of steps; the bound keeps validation and execution cheap whatever is sent. */
export const MAX_PIPELINE_NODES = 50;

/** The error a settings check throws: `field` is the proto field path of the problem. */
export function settingsInvalid(field: string, message: string): StepError {
  return new StepError("settings_invalid", `${field}: ${message}`, { field });
}

/** Refuses a condition (JSONata) that cannot compile, naming the field and the position. */
export function checkCondition(text: string, path: string): void {
  if (text.length > MAX_EXPRESSION_LENGTH)
    throw settingsInvalid(path, `JSONata error at position 0: an expression has at most ${MAX_EXPRESSION_LENGTH} characters`);
  try {
    compileExpression(text, path);
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    throw settingsInvalid(path, `JSONata error at position ${error.details.position ?? 0}: ${error.details.jsonataMessage}`);
  }
}

/** A list of node ids is as long as a pipeline at most. */
export function checkNodeIds(ids: readonly string[], path: string): void {
  if (ids.length > MAX_PIPELINE_NODES) throw settingsInvalid(path, `at most ${MAX_PIPELINE_NODES} node ids`);
}
