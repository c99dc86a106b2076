import type { CallbackNode, HttpRequestNode } from "../../../gen/docpipe/v1/pipe_pb.js";
import { settingsInvalid } from "./settings.ts";

const MAX_CALLBACK_HEADERS = 50;

const MAX_HEADER_VALUE_LENGTH = 8192;

const MAX_RETRY_COUNT = 10;

const MIN_TIMEOUT_SECONDS = 1;

const MAX_TIMEOUT_SECONDS = 300;

/** RFC 9110 token: what an HTTP header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * What Node refuses in a header value (it sends tab, 0x20-0x7E and 0x80-0xFF only): control
 * characters (CR, LF, NUL among them would let a value split the request) and anything past U+00FF
 * (`€`, a zero-width space). Saved, such a value failed every attempt: a callback's retries for a
 * day, an HTTP request node's at each run.
 */
const HEADER_VALUE_FORBIDDEN = /[^\t\u0020-\u007e\u0080-\u00ff]/;

/** Headers, retries and timeout, as callbacks and HTTP request nodes both have them. */
export function checkRequestSettings(request: CallbackNode | HttpRequestNode, path: string): void {
  const headers = Object.entries(request.headers);
  if (headers.length > MAX_CALLBACK_HEADERS) throw settingsInvalid(`${path}.headers`, `at most ${MAX_CALLBACK_HEADERS} headers`);
  for (const [name, value] of headers) {
    if (value.length > MAX_HEADER_VALUE_LENGTH)
      throw settingsInvalid(`${path}.headers`, `the value of "${name.slice(0, 100)}" is longer than ${MAX_HEADER_VALUE_LENGTH} characters`);
    if (!HEADER_NAME.test(name)) throw settingsInvalid(`${path}.headers`, `"${name.slice(0, 100)}" is not a valid header name`);
    if (HEADER_VALUE_FORBIDDEN.test(value))
      throw settingsInvalid(`${path}.headers`, `the value of "${name}" contains control characters or characters past U+00FF, which HTTP headers cannot carry`);
  }
  if (request.retryCount !== undefined && (request.retryCount < 0 || request.retryCount > MAX_RETRY_COUNT)) {
    throw settingsInvalid(`${path}.retry_count`, `must be from 0 to ${MAX_RETRY_COUNT}`);
  }
  if (request.timeoutSeconds !== undefined && (request.timeoutSeconds < MIN_TIMEOUT_SECONDS || request.timeoutSeconds > MAX_TIMEOUT_SECONDS)) {
    throw settingsInvalid(`${path}.timeout_seconds`, `must be from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}`);
  }
}
