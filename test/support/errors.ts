import { ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "../../src/platform/error-info.ts";

/** The ConnectError a call failed with; fails the test when the call succeeds. */
export async function connectErrorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

/** The stable ErrorInfo reason an error carries (see src/api/errors.ts), if any. */
export function reasonOf(error: ConnectError): string | undefined {
  return errorInfoOf(error)?.reason;
}
