import { describe, expect, it } from "vitest";
import { tracingConfigured } from "../../src/platform/observability/tracing.ts";

describe("tracing is on only when the OTEL_* settings ask for it", () => {
  it.each([
    [{}, false],
    [{ OTEL_SERVICE_NAME: "docpipe" }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }, false],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" }, true],
    [{ OTEL_TRACES_EXPORTER: "otlp" }, true],
    [{ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, false],
    [{ OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, false],
    [{ OTEL_SDK_DISABLED: "false", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }, true],
  ])("%j: %s", (env, on) => {
    expect(tracingConfigured(env)).toBe(on);
  });
});
