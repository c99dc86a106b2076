import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs. Credentials are redacted wherever they could appear, so neither an API key
 * nor the internal token reaches a log even when a request is logged whole.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        "req.headers.authorization",
        'headers["x-api-key"]',
        "headers.authorization",
        "keyValue",
        "key_value",
      ],
      censor: "[redacted]",
    },
  });
}
