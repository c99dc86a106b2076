/**
 * A node's step failed for a reason the pipe's author can act on. The message starts with the stable
 * code (`validation_failed: ...`), which is how the run's failure reason is read from a step error;
 * `details` carries what locates the fault (an expression's position, a schema path).
 */
export class StepError extends Error {
  override name = "StepError";
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, details: Record<string, unknown> = {}) {
    super(`${code}: ${message}`);
    this.code = code;
    this.details = details;
  }
}

/** Every code a node of this folder fails a step with: the bounded failure reasons the worker counts. */
export const NODE_STEP_ERROR_CODES = [
  "expression_invalid",
  "expression_failed",
  "pattern_invalid",
  "pattern_timeout",
  "settings_invalid",
  "extract_missing_fields",
  "schema_invalid",
  "validation_failed",
  "validation_timeout",
  "source_missing",
  "http_request_refused",
  "http_request_failed",
  "http_response_invalid",
  "email_invalid",
  "email_failed",
] as const;
