import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { checkCallbackUrl, ForbiddenAddressError, guardedLookup } from "./address-guard.ts";

export interface CallbackRequest {
  url: string;
  method: "POST" | "PUT" | "PATCH";
  /** The pipeline's extra headers; framing headers among them are ignored. */
  headers: Readonly<Record<string, string>>;
  body: string;
  /** Called before the attempt, so every attempt carries a fresh timestamp. */
  sign: (body: string) => Record<string, string>;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  /** Aborts the attempt (the worker is stopping). */
  signal: AbortSignal;
}

/** How one attempt ended: a 2xx, another status, no connection or answer, no answer in time, or a forbidden address or header. */
type AttemptOutcome = "delivered" | "http_error" | "network_error" | "timeout" | "refused";

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** The receiver's status, when it answered. */
  status?: number;
  /** Why it was not delivered, safe to show; empty when delivered. */
  error: string;
}

/** Headers the pipeline may not set: they frame the request or carry our signature. */
const RESERVED_HEADERS = new Set(["host", "content-length", "content-type", "transfer-encoding", "connection", "x-docpipe-signature"]);

/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 8 * 3600_000;

/**
 * The delay before retry number `retry` (1-based): backoffMs, then four times longer each time, capped
 * at 8 hours. With the default 5 s and 9 retries: 5 s, 20 s, 80 s, 5 min 20 s, 21 min, 85 min,
 * 5 h 41 min, 8 h, 8 h, about 24 hours in all (Standard Webhooks and Stripe retry for a day or more).
 */
export function backoffDelay(backoffMs: number, retry: number): number {
  return Math.min(backoffMs * 4 ** (retry - 1), MAX_BACKOFF_MS);
}

/**
 * Makes one attempt of a callback: 2xx is delivered; any other status, a network error or a timeout
 * is worth retrying; redirects are not followed. A forbidden address is refused without sending
 * anything (retrying would not change where the name points in any way we accept), and so is a
 * header Node cannot send (it would refuse it again at every attempt). Throws only when `signal`
 * aborts it.
 */
export async function attemptCallback(callback: CallbackRequest): Promise<AttemptResult> {
  const refusal = checkCallbackUrl(callback.url, callback.allowPrivateNetworks);
  if (refusal !== undefined) return { outcome: "refused", error: refusal };
  try {
    const status = await attemptOnce(callback);
    if (status >= 200 && status < 300) return { outcome: "delivered", status, error: "" };
    return { outcome: "http_error", status, error: `HTTP ${status}` };
  } catch (error) {
    if (callback.signal.aborted) throw error;
    if (error instanceof ForbiddenAddressError || error instanceof UnsendableHeaderError) return { outcome: "refused", error: error.message };
    // Not our signal, so an abort here is the attempt's own timeout.
    if ((error as Error).name === "AbortError") return { outcome: "timeout", error: `no answer within ${callback.timeoutMs} ms` };
    return { outcome: "network_error", error: (error as Error).message };
  }
}

/** One request; resolves with the status once the response body has been drained. */
async function attemptOnce(callback: CallbackRequest): Promise<number> {
  const ownHeaders = { "content-type": "application/json", "user-agent": "docpipe-callback/1", ...callback.sign(callback.body) };
  // A callback may reach its receiver twice: its payload's run id is what a receiver deduplicates on.
  const response = await sendOnce({ ...callback, ownHeaders, maxResponseBytes: 0, mayRepeat: true });
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
  /**
   * The receiver copes with this request coming twice (a callback, an idempotent method): only such
   * a request is sent on a kept connection, and sent again on a new one when that turns out closed.
   */
  mayRepeat: boolean;
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
 * A header Node refuses to send: a value with a character outside tab, 0x20-0x7E and 0x80-0xFF (a
 * control character, `€`, a zero-width space), or a name that is not a token. Pipelines saved
 * before such values were refused at save may still carry one; its message names the header, never
 * its value (a value is often a credential).
 */
export class UnsendableHeaderError extends Error {
  override name = "UnsendableHeaderError";
}

/** Node's errors for a header it cannot send, thrown as the request is made, before anything goes out. */
const UNSENDABLE_HEADER_CODES = new Set(["ERR_INVALID_CHAR", "ERR_INVALID_HTTP_TOKEN"]);

/** How long an idle kept connection stays open: under the 5 s that Node's and Apache's servers keep one. */
const IDLE_CONNECTION_MS = 4000;

/**
 * Connections kept open between requests, per origin: a receiver is called again and again, and a
 * new connection per request (a TCP handshake, a TLS one for https) cost both ends more than the
 * request itself. A connection is reused only for the origin it was opened to, after the guard
 * checked its address; requests with and without the guard never share one. Idle connections do
 * not keep the process alive, and close earlier when the receiver's `Keep-Alive: timeout` says so.
 */
const keptConnections = { guarded: keptAgents(), unguarded: keptAgents() };

function keptAgents() {
  const options = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
  return { "http:": new http.Agent(options), "https:": new https.Agent(options) };
}

/** A kept connection that failed before any answer came: the server closed it as it was reused. */
class StaleConnectionError extends Error {
  override name = "StaleConnectionError";
}

/**
 * One request under the callbacks' rules: no redirect is followed, a name resolving to a forbidden
 * address is refused at connect time (unless private networks are allowed), one timeout covers it
 * all. A request that may repeat goes on a kept connection, and once more on a new one (within the
 * same timeout) when the kept one turns out closed by the server before any answer; any other
 * request gets a connection of its own.
 */
export async function sendOnce(outgoing: OutgoingRequest): Promise<IncomingResponse> {
  const url = new URL(outgoing.url);
  const signal = AbortSignal.any([outgoing.signal, AbortSignal.timeout(outgoing.timeoutMs)]);
  if (!outgoing.mayRepeat) return send(url, outgoing, false, signal);
  const agents = outgoing.allowPrivateNetworks ? keptConnections.unguarded : keptConnections.guarded;
  try {
    return await send(url, outgoing, url.protocol === "https:" ? agents["https:"] : agents["http:"], signal);
  } catch (error) {
    if (error instanceof StaleConnectionError) return send(url, outgoing, false, signal);
    throw error;
  }
}

function send(url: URL, outgoing: OutgoingRequest, agent: http.Agent | false, signal: AbortSignal): Promise<IncomingResponse> {
  // Looked up at each call (not bound at import), so the request is traced when tracing is on.
  const request = url.protocol === "https:" ? https.request : http.request;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(outgoing.headers)) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  Object.assign(headers, outgoing.ownHeaders);
  if (outgoing.body !== undefined) headers["content-length"] = String(Buffer.byteLength(outgoing.body));
  return new Promise((resolve, reject) => {
    let sent: http.ClientRequest;
    try {
      sent = request(url, {
        method: outgoing.method,
        headers,
        agent,
        signal,
        ...(outgoing.allowPrivateNetworks ? {} : { lookup: guardedLookup }),
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      reject(
        code !== undefined && UNSENDABLE_HEADER_CODES.has(code) ? new UnsendableHeaderError(`a header cannot be sent: ${(error as Error).message}`) : error,
      );
      return;
    }
    let answered = false;
    sent.on("error", (error: NodeJS.ErrnoException) => {
      const stale = sent.reusedSocket && !answered && (error.code === "ECONNRESET" || error.code === "EPIPE");
      reject(stale ? new StaleConnectionError(error.message) : error);
    });
    sent.on("response", (response: IncomingMessage) => {
      answered = true;
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
