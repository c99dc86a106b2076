import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/docpipe/v1/error_pb.js";

/**
 * The one way services fail: a ConnectError with a deliberate code and an ErrorInfo detail whose
 * `reason` is the stable snake_case id the REST edge turns into the problem `code`. A
 * `retryAfterSeconds` in its metadata is also sent as the response's `Retry-After` header, which
 * HTTP client libraries honour without reading the detail.
 */
export function serviceError(code: Code, reason: string, message: string, metadata: Record<string, string> = {}): ConnectError {
  const headers = metadata.retryAfterSeconds === undefined ? undefined : { "retry-after": metadata.retryAfterSeconds };
  return new ConnectError(message, code, headers, [{ desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason, metadata }) }]);
}

/** Bad input: InvalidArgument naming the field, e.g. invalidArgument("name", "name must not be empty"). */
export function invalidArgument(field: string, message: string, reason = "invalid_argument"): ConnectError {
  return serviceError(Code.InvalidArgument, reason, message, { field });
}

/**
 * A resource that does not exist, or exists in another organization: the two are never told apart.
 * `resource` is snake_case, such as "pipe"; the reason is "pipe_not_found".
 */
export function notFound(resource: string, message = `${resource.replaceAll("_", " ")} not found`): ConnectError {
  return serviceError(Code.NotFound, `${resource}_not_found`, message);
}
