import { pino, type Logger } from "pino";
import { activeTraceId, tracingOn } from "./observability/tracing.ts";

export type { Logger };

/** With tracing on, each line logged within a span carries its trace id, so one id finds the trace and the logs. */
function traceIdOfLine(): object {
  const traceId = activeTraceId();
  return traceId === undefined ? {} : { traceId };
}

/**
 * Structured JSON logs. Credentials are redacted wherever they could appear, so neither an API key
 * nor the internal token reaches a log even when a request is logged whole. Lines are written
 * asynchronously: a request never waits for standard output (a slow pipe or terminal would stall
 * every request), and pino writes what is still buffered when the process exits.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      ...(tracingOn() ? { mixin: traceIdOfLine } : {}),
      redact: {
        paths: ['req.headers["x-api-key"]', "req.headers.authorization", 'headers["x-api-key"]', "headers.authorization", "keyValue", "key_value"],
        censor: "[redacted]",
      },
    },
    pino.destination({ dest: 1, sync: false }),
  );
}

/** An error as one line, for a log line or stderr: its message (causes are already summarized in ours), never a stack. */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, " ").trim() || "unknown error";
}
