/** Why this process cannot work, in words fit for anyone asking /readyz (no secrets, no addresses). */
export class NotReadyError extends Error {
  override name = "NotReadyError";
}

/** What /readyz says for a readiness check that failed with `error`: a NotReadyError's own words, or that the database does not answer. */
export function notReadyDetail(error: unknown): string {
  return error instanceof NotReadyError ? error.message : "the database is not reachable";
}
