import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/docpipe/v1/error_pb.js";

/** What the console shows of a failed RPC. */
export interface RpcProblem {
  /** The service's message, e.g. "name must not be empty". */
  message: string;
  /** The Connect code's name and the stable reason, e.g. "invalid_argument" / "key_not_found". */
  code: string;
  reason: string | undefined;
  /** The request field the error is about, when the service names one (e.g. "pipeline.nodes[0].http_trigger.max_size_mb"). */
  field: string | undefined;
}

const CODE_NAMES = Object.fromEntries(
  Object.entries(Code)
    .filter(([, value]) => typeof value === "number")
    .map(([name, value]) => [value, name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase()]),
);

export function describeError(error: unknown): RpcProblem {
  const connectError = ConnectError.from(error);
  const info = connectError.findDetails(ErrorInfoSchema)[0];
  return {
    message: connectError.rawMessage,
    code: CODE_NAMES[connectError.code] ?? "unknown",
    reason: info?.reason === "" ? undefined : info?.reason,
    field: info?.metadata.field,
  };
}

/** Whether the error says the internal token is missing or wrong: the console then asks for it. */
export function needsToken(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}
