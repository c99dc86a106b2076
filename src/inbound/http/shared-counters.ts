import { Redis } from "ioredis";

/** How long a rate-limit counter's command may take before the request passes without it. */
const COMMAND_TIMEOUT_MS = 500;

/**
 * The Redis client the edges share their rate-limit counters through. When it cannot answer, a
 * request passes (the limits are skipped meanwhile) rather than waiting: a refused connection
 * fails at once, and `commandTimeout` ends a command that a server which accepted the connection
 * never answers (a stopped or overloaded Redis held every submission for as long as it was away).
 */
export function connectSharedCounters(url: string, log: { warn(object: object, message: string): void }): Redis {
  const redis = new Redis(url, { connectTimeout: 500, commandTimeout: COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1, lazyConnect: false });
  redis.on("error", (error) => log.warn({ err: error.message }, "redis unavailable; rate limits are not enforced meanwhile"));
  return redis;
}
