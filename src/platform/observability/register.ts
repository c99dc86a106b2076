/**
 * Imported first by src/app/main.ts, before any module that tracing instruments is loaded: starts the
 * OpenTelemetry SDK when the OTEL_* settings ask for it. Otherwise it loads nothing and costs nothing.
 */
import { tracingConfigured } from "./tracing.ts";

if (tracingConfigured(process.env)) {
  const { startTracing } = await import("./otel-sdk.ts");
  startTracing();
}
