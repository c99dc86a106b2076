/** PostgreSQL SQLSTATE classes and socket errors that mean "the database is not reachable right now". */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01",
  "57P02",
  "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
  "08000",
  "08001",
  "08003",
  "08004",
  "08006", // connection exceptions
]);

const UNAVAILABLE_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error",
  "Connection terminated unexpectedly",
];

/** Whether `error` (from pg, possibly wrapped) means the database is down or unreachable, not a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && UNAVAILABLE_CODES.has(code)) return true;
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true;
    if (UNAVAILABLE_MESSAGES.some((message) => current instanceof Error && current.message.includes(message))) return true;
  }
  return false;
}
