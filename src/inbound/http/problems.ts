import { Code, type ConnectError } from "@connectrpc/connect";
import { errorInfoOf } from "../../platform/error-info.ts";

/** Every kind of problem the REST edge answers with: its status and its title (same for every occurrence). */
export const PROBLEMS = {
  api_key_missing: { status: 401, title: "API key missing" },
  api_key_invalid: { status: 401, title: "API key invalid" },
  api_key_deactivated: { status: 401, title: "API key deactivated" },
  api_key_expired: { status: 401, title: "API key expired" },
  rate_limited: { status: 429, title: "Rate limit exceeded" },
  too_many_failed_authentications: { status: 429, title: "Too many failed authentications" },
  too_many_queued_runs: { status: 429, title: "Too many queued runs" },
  workspace_id_invalid: { status: 400, title: "Workspace id invalid" },
  workspace_not_found: { status: 404, title: "Workspace not found" },
  pipe_not_found: { status: 404, title: "Pipe not found or not active" },
  origin_not_allowed: { status: 403, title: "Origin not allowed" },
  not_multipart: { status: 400, title: "Request body is not multipart/form-data" },
  multipart_malformed: { status: 400, title: "Multipart body malformed" },
  file_missing: { status: 400, title: "File part missing" },
  file_part_unexpected: { status: 400, title: "Unexpected file part" },
  too_many_files: { status: 400, title: "More than one file" },
  file_empty: { status: 400, title: "File empty" },
  file_too_large: { status: 400, title: "File too large" },
  file_name_invalid: { status: 400, title: "File name invalid" },
  unsupported_format: { status: 400, title: "Unsupported file format" },
  idempotency_key_invalid: { status: 400, title: "Idempotency key invalid" },
  idempotency_key_reused: { status: 422, title: "Idempotency key reused for a different request" },
  idempotency_key_in_flight: { status: 409, title: "Request with this idempotency key in progress" },
  bad_request: { status: 400, title: "Bad request" },
  permission_denied: { status: 403, title: "Permission denied" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  request_timeout: { status: 408, title: "Request timeout" },
  conflict: { status: 409, title: "Conflict" },
  expectation_failed: { status: 417, title: "Expectation failed" },
  headers_too_large: { status: 431, title: "Request headers too large" },
  internal_error: { status: 500, title: "Internal error" },
  service_unavailable: { status: 503, title: "Service unavailable" },
  timeout: { status: 504, title: "Upstream timeout" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

export const PROBLEM_TYPE_BASE = "https://docpipe.dev/problems/";

/** A problem to answer with; thrown anywhere in a request, turned into a document by the error handler. */
export class Problem extends Error {
  override name = "Problem";
  readonly code: ProblemCode;
  readonly statusCode: number;
  /** Extension members, such as { maxSizeMb: 10 }. */
  readonly extensions: Record<string, unknown>;
  /** Extra response headers, such as Allow or Retry-After. */
  readonly headers: Record<string, string>;

  /** `cause`: the error behind it, logged (never sent) when the problem is a 5xx. */
  constructor(code: ProblemCode, detail: string, extensions: Record<string, unknown> = {}, headers: Record<string, string> = {}, cause?: unknown) {
    super(detail, { cause });
    this.code = code;
    this.statusCode = PROBLEMS[code].status;
    this.extensions = extensions;
    this.headers = headers;
  }
}

/** Connect code -> HTTP status and generic problem (ours: connect-es keeps its table private); anything else is a 500. */
const BY_CONNECT_CODE: Partial<Record<Code, ProblemCode>> = {
  [Code.InvalidArgument]: "bad_request",
  [Code.FailedPrecondition]: "bad_request",
  [Code.OutOfRange]: "bad_request",
  [Code.Unauthenticated]: "api_key_invalid",
  [Code.PermissionDenied]: "permission_denied",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "conflict",
  [Code.Aborted]: "conflict",
  [Code.ResourceExhausted]: "rate_limited",
  [Code.Unavailable]: "service_unavailable",
  [Code.DeadlineExceeded]: "timeout",
};

function isProblemCode(value: string): value is ProblemCode {
  return Object.hasOwn(PROBLEMS, value);
}

/** Request fields the edge fills from a header: a service's message about one names the header instead. */
const HEADER_OF_FIELD: Readonly<Record<string, string>> = { idempotency_key: "Idempotency-Key", workspace_id: "X-Workspace-Id" };

/** A service's message, with a leading field name the client sent as a header named as that header. */
function clientWords(message: string, field: string | undefined): string {
  const header = field !== undefined && Object.hasOwn(HEADER_OF_FIELD, field) ? HEADER_OF_FIELD[field] : undefined;
  return header !== undefined && message.startsWith(`${field} `) ? `the ${header} header${message.slice(field!.length)}` : message;
}

/**
 * The problem for an error of a Connect service: its ErrorInfo reason when the edge knows it and
 * it agrees with the code's status, else the generic problem of the code. Messages of errors
 * without an ErrorInfo (bugs, transport failures) are never passed on.
 */
export function problemFromConnectError(error: ConnectError): Problem {
  const generic = BY_CONNECT_CODE[error.code] ?? "internal_error";
  if (generic === "internal_error") return new Problem("internal_error", "the server could not process the request", {}, {}, error);
  const info = errorInfoOf(error);
  const reason = info?.reason ?? "";
  const code = isProblemCode(reason) && PROBLEMS[reason].status === PROBLEMS[generic].status ? reason : generic;
  // A service that says when to retry (ResourceExhausted) is passed on as Retry-After, and its limit as `limit`.
  const retryAfter = info?.metadata.retryAfterSeconds;
  const headers: Record<string, string> = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? { "retry-after": retryAfter } : {};
  const limit = info?.metadata.limit;
  const extensions = code === "too_many_queued_runs" && limit !== undefined ? { limit: Number(limit) } : {};
  // Only our services' own messages are meant for clients; a transport's ("connect ECONNREFUSED
  // 10.0.0.7:8081") is not, so without an ErrorInfo the detail is the problem's title.
  return new Problem(code, info === undefined ? PROBLEMS[code].title : clientWords(error.rawMessage, info.metadata.field), extensions, headers, error);
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  code: ProblemCode;
  traceId: string;
  [extension: string]: unknown;
}

/** The RFC 9457 document of `problem` for the request at `instance`. */
export function problemDocument(problem: Problem, instance: string, traceId: string): ProblemDocument {
  const { status, title } = PROBLEMS[problem.code];
  return {
    ...problem.extensions,
    type: PROBLEM_TYPE_BASE + problem.code,
    title,
    status,
    detail: problem.message,
    instance,
    code: problem.code,
    traceId,
  };
}
