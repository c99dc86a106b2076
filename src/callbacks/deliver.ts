import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import { checkCallbackUrl, ForbiddenAddressError, guardedLookup } from "./address-guard.ts";

export interface CallbackRequest {
  url: string;
  method: "POST" | "PUT" | "PATCH";
  /** The pipeline's extra headers; framing headers among them are ignored. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Called before each attempt, so every attempt carries a fresh timestamp. */
  sign: (body: string) => Record<string, string>;
  timeoutMs: number;
  /** Attempts after the first. */
  retries: number;
  /** Delay before the first retry; doubles for each further one. */
  backoffMs: number;
  allowPrivateNetworks: boolean;
  /** Aborts waiting and the attempt in flight (run cancelled, lease lost, worker stopping). */
  signal: AbortSignal;
  /** Told the outcome of each attempt (for metrics). */
  onAttempt?: (outcome: AttemptOutcome, attempt: number) => void;
}

/** How one attempt ended: a 2xx, another status, no connection or answer, no answer in time, or a forbidden address. */
export type AttemptOutcome = "delivered" | "http_error" | "network_error" | "timeout" | "refused";

export interface DeliveryResult {
  /** The receiver's 2xx status. */
  status: number;
  attempts: number;
}

/** A callback that was refused or never answered 2xx; the message says why and is safe to show. */
export class CallbackDeliveryError extends Error {
  override name = "CallbackDeliveryError";
}

/** Headers the pipeline may not set: they frame the request or carry our signature. */
const RESERVED_HEADERS = new Set(["host", "content-length", "content-type", "transfer-encoding", "connection", "x-docpipe-signature"]);

/** The delay before retry number `retry` (1-based): backoffMs, 2x, 4x, ... capped at a minute. */
export function backoffDelay(backoffMs: number, retry: number): number {
  return Math.min(backoffMs * 2 ** (retry - 1), 60_000);
}

/**
 * Sends a callback: 2xx is delivered; any other status, a network error or a timeout is retried with
 * exponential backoff; redirects are not followed. A forbidden address fails at once (retrying would
 * not change where the name points in any way we accept). Throws CallbackDeliveryError at the end.
 */
export async function deliverCallback(callback: CallbackRequest): Promise<DeliveryResult> {
  const refusal = checkCallbackUrl(callback.url, callback.allowPrivateNetworks);
  const told = callback.onAttempt ?? (() => {});
  if (refusal !== undefined) {
    told("refused", 1);
    throw new CallbackDeliveryError(refusal);
  }
  const host = new URL(callback.url).host;
  let lastFailure = "";
  for (let attempt = 1; attempt <= callback.retries + 1; attempt++) {
    if (attempt > 1) await sleep(backoffDelay(callback.backoffMs, attempt - 1), undefined, { signal: callback.signal });
    try {
      const status = await attemptOnce(callback);
      if (status >= 200 && status < 300) {
        told("delivered", attempt);
        return { status, attempts: attempt };
      }
      told("http_error", attempt);
      lastFailure = `HTTP ${status}`;
    } catch (error) {
      if (callback.signal.aborted) throw error;
      if (error instanceof ForbiddenAddressError) {
        told("refused", attempt);
        throw new CallbackDeliveryError(error.message);
      }
      // Not our signal, so an abort here is the attempt's own timeout.
      const timedOut = (error as Error).name === "AbortError";
      told(timedOut ? "timeout" : "network_error", attempt);
      lastFailure = timedOut ? `no answer within ${callback.timeoutMs} ms` : (error as Error).message;
    }
  }
  throw new CallbackDeliveryError(`callback to ${host} failed after ${callback.retries + 1} attempts; last: ${lastFailure}`);
}

/** One request; resolves with the status once the response body has been drained. */
async function attemptOnce(callback: CallbackRequest): Promise<number> {
  const ownHeaders = { "content-type": "application/json", "user-agent": "docpipe-callback/1", ...callback.sign(callback.body) };
  const response = await sendOnce({ ...callback, ownHeaders, maxResponseBytes: 0 });
  return response.status;
}

export interface OutgoingRequest {
  url: string;
  method: string;
  /** The pipeline's headers; framing headers and our signature among them are dropped. */
  headers: Readonly<Record<string, string>>;
  /** Our headers, set after the pipeline's. */
  ownHeaders: Readonly<Record<string, string>>;
  /** Sent with content-length when defined. */
  body: string | undefined;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  signal: AbortSignal;
  /** The response body is kept up to this size (a larger one fails the attempt); 0 drains it unread. */
  maxResponseBytes: number;
}

/** The response to one request: its status, content type and body (empty when drained). */
export interface IncomingResponse {
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

/** A response body past OutgoingRequest.maxResponseBytes. */
export class ResponseTooLargeError extends Error {
  override name = "ResponseTooLargeError";
}

/**
 * One request under the callbacks' rules: no redirect is followed, a name resolving to a forbidden
 * address is refused at connect time (unless private networks are allowed), one timeout covers it all.
 */
export function sendOnce(outgoing: OutgoingRequest): Promise<IncomingResponse> {
  const url = new URL(outgoing.url);
  // Looked up at each call (not bound at import), so the request is traced when tracing is on.
  const request = url.protocol === "https:" ? https.request : http.request;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(outgoing.headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  Object.assign(headers, outgoing.ownHeaders);
  if (outgoing.body !== undefined) headers["content-length"] = String(Buffer.byteLength(outgoing.body));
  return new Promise((resolve, reject) => {
    const sent = request(url, {
      method: outgoing.method,
      headers,
      agent: false,
      signal: AbortSignal.any([outgoing.signal, AbortSignal.timeout(outgoing.timeoutMs)]),
      ...(outgoing.allowPrivateNetworks ? {} : { lookup: guardedLookup }),
    });
    sent.on("error", reject);
    sent.on("response", (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("error", reject);
      response.on("data", (chunk: Buffer) => {
        if (outgoing.maxResponseBytes === 0) return;
        size += chunk.length;
        if (size > outgoing.maxResponseBytes) {
          response.destroy(new ResponseTooLargeError(`the response is larger than ${outgoing.maxResponseBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, contentType: response.headers["content-type"], body: Buffer.concat(chunks) }));
    });
    sent.end(outgoing.body);
  });
}
