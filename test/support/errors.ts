import { ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "../../src/services/errors.ts";

/** The ConnectError a call failed with; fails the test when the call succeeds. */
export async function connectErrorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

/** The ConnectError `run` throws; any other error is rethrown, and the test fails when `run` returns. */
export function connectErrorThrownBy(run: () => unknown): ConnectError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConnectError) return error;
    throw error;
  }
  throw new Error("expected a ConnectError to be thrown");
}

/** The stable ErrorInfo reason an error carries (see src/services/errors.ts), if any. */
export function reasonOf(error: ConnectError): string | undefined {
  return errorInfoOf(error)?.reason;
}
