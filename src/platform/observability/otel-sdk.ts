import type { ClientRequest, IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { Span } from "@opentelemetry/api";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { markTracingOn } from "./tracing.ts";

/**
 * Starts the OpenTelemetry SDK: spans of outgoing HTTP requests (callbacks) and of PostgreSQL
 * queries, exported as the standard OTEL_* variables say (OTLP endpoint, protocol, sampler; the
 * service name defaults to docpipe). Loaded only when tracing is configured, before the modules it
 * instruments. Incoming requests get their spans from the edge (request-span.ts) and from the
 * internal server's Connect interceptor. Fastify's own instrumentation (@fastify/otel) is left out:
 * it cost about a fifth of the edge's 1 KiB throughput in a side-by-side run (docs/observability.md).
 */
export function startTracing(): NodeSDK {
  process.env.OTEL_SERVICE_NAME ??= "docpipe";
  const sdk = new NodeSDK({
    // Traces only: metrics are Prometheus's (/metrics), and the logs go to standard output. Without
    // these the SDK would also export the instrumentations' own metrics over OTLP, at a cost on every request.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      // Clients only: the edge makes its requests' server spans itself (request-span.ts), and the
      // internal port's RPCs get theirs from a Connect interceptor.
      new HttpInstrumentation({ requestHook: redactUrl, disableIncomingRequestInstrumentation: true }),
      // Only queries made within a span (a request, an RPC, a run): the workers' polling starts no
      // traces. Taking a pooled connection is not a span of its own.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
    ],
  });
  sdk.start();
  // The HTTP instrumentation patches node:http and node:https when they are required; ESM imports
  // alone would not trigger it (callbacks use https, which no CommonJS module may have required).
  const require = createRequire(import.meta.url);
  require("node:http");
  require("node:https");
  markTracingOn(() => sdk.shutdown());
  return sdk;
}

/**
 * A client span's `url.full` cut to the receiver's origin and a redacted path: a callback URL's path
 * or query may hold the receiver's token (chat webhooks carry it in the path), and spans leave this
 * process. The origin is enough to tell receivers apart. (User and password are never accepted in a callback URL.)
 */
export function redactUrl(span: Pick<Span, "setAttribute">, request: ClientRequest | IncomingMessage): void {
  if (!("getHeader" in request)) return;
  span.setAttribute("url.full", `${request.protocol}//${request.getHeader("host")}/${request.path === "/" ? "" : "REDACTED"}`);
}
