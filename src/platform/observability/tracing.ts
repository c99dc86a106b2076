import { type Context, context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

/**
 * Tracing as the rest of the code sees it: the OpenTelemetry API only. Until src/platform/observability/register.ts
 * starts the SDK (when OTEL_* settings ask for it), every call here is a cheap no-op and the Connect
 * interceptors are not installed at all.
 */
const state: { on: boolean; shutdown?: () => Promise<void> } = { on: false };

export const tracer = trace.getTracer("docpipe");

/** Whether the OTEL_* settings turn tracing on: an OTLP endpoint, or a traces exporter other than none. */
export function tracingConfigured(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || exporter);
}

/** Called once the SDK runs, with what sends the spans it still holds and stops it. */
export function markTracingOn(shutdown: () => Promise<void>): void {
  state.on = true;
  state.shutdown = shutdown;
}

/** Sends the spans still buffered; the process calls it last when it stops. */
export async function stopTracing(): Promise<void> {
  await state.shutdown?.().catch(() => {});
}

export function tracingOn(): boolean {
  return state.on;
}

/** The trace id of the active span, when tracing is on and a span is active. */
export function activeTraceId(): string | undefined {
  if (!state.on) return undefined;
  const span = trace.getActiveSpan();
  const spanContext = span?.spanContext();
  return spanContext !== undefined && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/** The active context as a W3C traceparent, to store beside work done later (a run); null when tracing is off. */
export function activeTraceparent(): string | null {
  if (!state.on) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored traceparent names (the root context when there is none). */
export function contextOfTraceparent(traceparent: string | null): Context {
  return traceparent === null ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent });
}

/** Runs `work` in a new active span; the span ends with the work and records its error. */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Record<string, string | number>; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

const headerSetter = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };
const headerGetter = {
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  // The W3C propagators ask for their headers by name; listing them all would cost on every call.
  keys: () => [],
};

function rpcAttributes(request: { service: { typeName: string }; method: { name: string } }) {
  return { "rpc.system": "connect_rpc", "rpc.service": request.service.typeName, "rpc.method": request.method.name };
}

/** Runs one RPC in an active span named after its method; a failure records its Connect code. */
function inRpcSpan<T>(
  request: { service: { typeName: string }; method: { name: string } },
  kind: SpanKind,
  parent: Context,
  work: () => Promise<T>,
): Promise<T> {
  const name = `${request.service.typeName}/${request.method.name}`;
  return tracer.startActiveSpan(name, { kind, attributes: rpcAttributes(request) }, parent, async (span) => {
    try {
      return await work();
    } catch (error) {
      const connectError = ConnectError.from(error);
      span.setAttribute("rpc.connect_rpc.error_code", Code[connectError.code]);
      span.setStatus({ code: SpanStatusCode.ERROR, message: connectError.rawMessage });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A client span per RPC, its context sent as `traceparent` (in-process and remote transports alike). */
export function clientTracingInterceptor(): Interceptor {
  return (next) => (request) => {
    return inRpcSpan(request, SpanKind.CLIENT, context.active(), () => {
      propagation.inject(context.active(), request.header, headerSetter);
      return next(request);
    });
  };
}

/**
 * In-process calls: no span of the caller's own (the call costs microseconds; the server span shows
 * it), only the caller's context sent as `traceparent`, as over the network.
 */
export function traceparentInterceptor(): Interceptor {
  return (next) => (request) => {
    propagation.inject(context.active(), request.header, headerSetter);
    return next(request);
  };
}

/** A server span per RPC, child of the caller's `traceparent`. */
export function serverTracingInterceptor(): Interceptor {
  return (next) => (request) => {
    const parent = propagation.extract(context.active(), request.header, headerGetter);
    return inRpcSpan(request, SpanKind.SERVER, parent, () => next(request));
  };
}
