import { setTimeout as sleep } from "node:timers/promises";
import { HttpMethod, type HttpRequestNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkCallbackUrl, ForbiddenAddressError } from "../../deliveries/address-guard.ts";
import { type IncomingResponse, ResponseTooLargeError, sendOnce, UnsendableHeaderError } from "../../deliveries/deliver.ts";
import { evaluateExpression } from "../../sandbox/expressions.ts";
import type { NodeContext, RunData } from "../run-data.ts";
import { StepError } from "../../step-error.ts";
import { previewUrl } from "../../deliveries/preview-url.ts";

/** What an HTTP request node needs beside the run: the operator's network rule and its sealed headers opened. */
export interface HttpRequestContext extends NodeContext {
  allowPrivateNetworks: boolean;
  /** Delay before the first retry; each further one doubles it. */
  backoffMs: number;
  /** The node's header values, opened (they are stored sealed). */
  openHeaders: (headers: Readonly<Record<string, string>>) => Record<string, string>;
}

/** The node's output: the response, its body parsed when it is JSON. */
export interface HttpRequestOutput {
  status: number;
  body: unknown;
}

/** What a node in test mode records instead of sending; header values are left out, they may be credentials. */
export interface RecordedRequest {
  testMode: true;
  request: { method: string; url: string; headers: string[]; body: unknown };
}

/** A response is kept up to this size: it becomes run data, stored with the step. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
const DEFAULT_TIMEOUT_SECONDS = 30;
/**
 * A JSON response nests at most this deep. The step's output is copied and written by functions
 * that recurse over it (storableValue, jsonb): 5,000 levels (10 KB of brackets) overflowed the
 * stack, and the step failed with V8's message. No API's answer comes near it.
 */
const MAX_RESPONSE_DEPTH = 256;

const METHODS: Record<HttpMethod, string> = {
  [HttpMethod.UNSPECIFIED]: "POST",
  [HttpMethod.GET]: "GET",
  [HttpMethod.POST]: "POST",
  [HttpMethod.PUT]: "PUT",
  [HttpMethod.PATCH]: "PATCH",
  [HttpMethod.DELETE]: "DELETE",
};

/** Methods whose request may reach the other system twice with the effect of once (RFC 9110, 9.2.2). */
const IDEMPOTENT_METHODS = new Set(["GET", "PUT", "DELETE"]);

/**
 * The delay before retry number `retry` (1-based): backoffMs, doubling, at most 30 s. A run waits on
 * this node, so its retries stay short; a callback's deliveries have a schedule of their own.
 */
function retryDelay(backoffMs: number, retry: number): number {
  return Math.min(backoffMs * 2 ** (retry - 1), 30_000);
}

/** Statuses worth another attempt: the server's passing trouble or its rate limit. */
function isRetryable(status: number): boolean {
  return status >= 500 || status === 429;
}

/**
 * Whether the URL has a user or password in it: it would go out as Basic auth, and be kept in clear
 * wherever the URL is (a test-mode step's output, stored and sent in callbacks). A callback's URL is
 * refused for them when saved; an HTTP request node's URL is known only at run time. Headers are
 * sealed, so credentials belong there.
 */
function carriesCredentials(url: string): boolean {
  const { username, password } = new URL(url);
  return username !== "" || password !== "";
}

/** Whether the JSON text's arrays and objects nest deeper than `limit`: one pass over it, brackets within strings skipped. */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index++; // a backslash escapes the next character (`\"` does not end the string)
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

function responseBody(response: IncomingResponse): unknown {
  const text = response.body.toString("utf8");
  if (text === "") return null;
  if (!/\bjson\b/i.test(response.contentType ?? "")) return text;
  if (nestsDeeperThan(text, MAX_RESPONSE_DEPTH)) {
    throw new StepError("http_response_invalid", `the JSON response nests deeper than ${MAX_RESPONSE_DEPTH} levels (HTTP ${response.status})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new StepError("http_response_invalid", `the response says it is JSON but is not (HTTP ${response.status})`);
  }
}

/**
 * Calls another system: the URL and the body come from JSONata over the run data (the body is the
 * whole run data when the node has none; GET and DELETE send none). The address rules are the
 * callbacks' (no private addresses unless allowed, checked again at connect time; redirects not
 * followed). Network errors, timeouts, 5xx and 429 are retried with a short backoff; another non-2xx status
 * fails at once. In test mode the request is recorded and not sent.
 */
export async function runHttpRequest(
  node: HttpRequestNode,
  runData: RunData,
  context: HttpRequestContext,
  path = "http_request",
): Promise<HttpRequestOutput | RecordedRequest> {
  const url = await evaluateExpression(node.url, `${path}.url`, runData, context);
  if (typeof url !== "string")
    throw new StepError("expression_failed", `${path}.url: the expression gives ${typeof url}, not a URL string`, { field: `${path}.url` });
  const method = METHODS[node.method] ?? "POST";
  const sendsBody = method !== "GET" && method !== "DELETE";
  const body = sendsBody ? ((node.body === "" ? runData : await evaluateExpression(node.body, `${path}.body`, runData, context)) ?? null) : undefined;
  const refusal = checkCallbackUrl(url, context.allowPrivateNetworks);
  if (refusal !== undefined) throw new StepError("http_request_refused", refusal.replace(/^callback url/, "url"));
  if (carriesCredentials(url)) throw new StepError("http_request_refused", "url must not carry credentials (user:password@); send them in a header");
  if (context.testMode) return { testMode: true, request: { method, url: previewUrl(url), headers: Object.keys(node.headers), body: body ?? null } };

  const outgoing = {
    url,
    method,
    headers: context.openHeaders(node.headers),
    ownHeaders: { accept: "application/json", "user-agent": "docpipe-http-request/1", ...(sendsBody ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: (node.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
    allowPrivateNetworks: context.allowPrivateNetworks,
    signal: context.signal,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    // Only an idempotent request is sent on a kept connection, which may make it go twice.
    mayRepeat: IDEMPOTENT_METHODS.has(method),
  };
  const attempts = (node.retryCount ?? 0) + 1;
  const host = new URL(url).host;
  let lastFailure = "";
  let made = 0;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    made = attempt;
    if (attempt > 1) await sleep(retryDelay(context.backoffMs, attempt - 1), undefined, { signal: context.signal });
    let response: IncomingResponse;
    try {
      response = await sendOnce(outgoing);
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (error instanceof ForbiddenAddressError) throw new StepError("http_request_refused", error.message.replace("callbacks", "HTTP requests"));
      // Node refuses such a header at every attempt, before anything is sent.
      if (error instanceof UnsendableHeaderError) throw new StepError("http_request_refused", error.message);
      if (error instanceof ResponseTooLargeError) throw new StepError("http_response_invalid", error.message);
      lastFailure = (error as Error).name === "AbortError" ? `no answer within ${outgoing.timeoutMs} ms` : (error as Error).message;
      continue;
    }
    if (response.status >= 200 && response.status < 300) return { status: response.status, body: responseBody(response) };
    lastFailure = response.status >= 300 && response.status < 400 ? `HTTP ${response.status} (redirects are not followed)` : `HTTP ${response.status}`;
    if (!isRetryable(response.status)) break;
  }
  throw new StepError("http_request_failed", `${method} ${host} failed: ${lastFailure}`, { attempts: made });
}
