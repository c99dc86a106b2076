import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "../data/db/errors.ts";
import { serviceError } from "./errors.ts";

/**
 * A database outage is Unavailable (retryable, 503 at the edge), not Internal: callers can tell
 * "try again" from "this is a bug".
 */
export const databaseOutageInterceptor: Interceptor = (next) => (request) =>
  next(request).catch((error: unknown) => {
    if (!(error instanceof ConnectError) && isDatabaseUnavailable(error)) {
      throw serviceError(Code.Unavailable, "service_unavailable", "the database is unavailable; retry shortly");
    }
    throw error;
  });
