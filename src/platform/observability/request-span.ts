import type { IncomingMessage, ServerResponse } from "node:http";
import { context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { tracer, tracingOn } from "./tracing.ts";

/**
 * The server span of each request to the public edge, made by the edge's own hooks rather than by
 * the HTTP instrumentation, so that it is always a root: a `traceparent` sent by a client is not
 * continued, since it would choose the trace id (which becomes the request id) and, with a
 * parent-based sampler, whether the request is recorded. (It costs the same CPU per request as the
 * instrumentation's span did, measured side by side.)
 */
const SPAN = Symbol("docpipe.requestSpan");
type Traced = IncomingMessage & { [SPAN]?: Span };

/** Starts the request's span when tracing is on; returns its trace id, which becomes the request id. */
export function startRequestSpan(request: IncomingMessage): string | undefined {
  if (!tracingOn()) return undefined;
  const method = request.method ?? "GET";
  const span = tracer.startSpan(method, {
    kind: SpanKind.SERVER,
    root: true,
    attributes: { "http.request.method": method, "url.path": (request.url ?? "/").split("?")[0]!, "url.scheme": "http" },
  });
  (request as Traced)[SPAN] = span;
  const { traceId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? traceId : undefined;
}

/**
 * Calls `next` with the request's span active, so the hooks and the handler after it (their RPCs,
 * queries and uploads) are its children; the span ends when the response closes.
 */
export function withinRequestSpan(request: IncomingMessage, response: ServerResponse, route: string, next: () => void): void {
  const span = (request as Traced)[SPAN];
  if (span === undefined) return next();
  endRequestSpanOnClose(request, response, route);
  context.with(trace.setSpan(ROOT_CONTEXT, span), next);
}

/**
 * Ends the request's span when its response closes, named after its route (`POST /pipes/:pipeId/trigger`),
 * never its path, which holds the pipe id. `close` comes in every case: answered, or the client gone
 * (even after its whole body was read, when no abort is reported).
 */
export function endRequestSpanOnClose(request: IncomingMessage, response: ServerResponse, route: string): void {
  const span = (request as Traced)[SPAN];
  if (span === undefined) return;
  (request as Traced)[SPAN] = undefined;
  response.once("close", () => {
    span.updateName(`${request.method ?? "GET"} ${route}`);
    span.setAttribute("http.route", route);
    if (!response.writableFinished) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: "the client went away before the answer" });
    } else {
      span.setAttribute("http.response.status_code", response.statusCode);
      if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}
