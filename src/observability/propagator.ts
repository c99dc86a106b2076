import type { Context, TextMapGetter, TextMapPropagator, TextMapSetter } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * W3C trace context, but never from an HTTP request arriving at this process. The public edge takes
 * requests from anyone: a `traceparent` of theirs would choose the trace id, which is also the
 * request's X-Request-Id and problem `traceId`, and with parent-based sampling whether it is
 * recorded. So an incoming request starts a trace of its own. Context still travels where docpipe
 * sends it: Connect calls between its own processes (their interceptors extract from the call's
 * Headers) and the traceparent stored on a run row.
 */
export class OwnTraceContextPropagator implements TextMapPropagator {
  readonly #w3c = new W3CTraceContextPropagator();

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#w3c.inject(context, carrier, setter);
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    return isIncomingRequestHeaders(carrier) ? context : this.#w3c.extract(context, carrier, getter);
  }

  fields(): string[] {
    return this.#w3c.fields();
  }
}

/** node:http's IncomingMessage.headers, as the HTTP instrumentation passes them: a plain object with the Host header. */
function isIncomingRequestHeaders(carrier: unknown): boolean {
  return typeof carrier === "object" && carrier !== null && !(carrier instanceof Headers) && "host" in carrier;
}
