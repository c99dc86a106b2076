/**
 * The OpenAPI 3.1 document of the REST edge, served at /openapi.json, and its reference page at /docs.
 * `@fastify/swagger` derives the paths, their parameters and their summaries from the routes as they
 * are registered; the problem catalogue (PROBLEMS and an example of each) adds the problem responses,
 * so the document cannot drift from what the edge answers. `@fastify/swagger-ui` serves the page
 * and its assets from this process: nothing is fetched from elsewhere, at run time or by the browser.
 */
import fastifySwagger, { type FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import fastifyPlugin from "fastify-plugin";
import { DEFAULT_PLANS } from "../../platform/config.ts";
import { CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, ORIGIN_CACHE_TTL_MS } from "./cors.ts";
import { Problem, PROBLEM_TYPE_BASE, problemDocument, PROBLEMS, type ProblemCode } from "./problems.ts";
import { acceptedSchema, triggerHeadersSchema, triggerParamsSchema } from "./schemas.ts";
import type { acceptedBody } from "./trigger.ts";

// The OpenAPI objects below are typed by hand rather than with openapi-types: its OpenAPIV3_1
// types reuse 3.0's MediaTypeObject, so a 3.1 document with a request body does not type-check.

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1); the route schemas fit it as they are. */
interface Schema {
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly [keyword: string]: unknown;
}

export interface Reference {
  $ref: string;
}

interface Header {
  description: string;
  schema: Schema;
}

interface Parameter {
  name: string;
  in: "path" | "header";
  required: boolean;
  description: string;
  schema: Schema;
}

interface Example {
  summary: string;
  value: unknown;
}

interface MediaType {
  schema: Schema | Reference;
  examples?: Record<string, Example>;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export interface Operation {
  summary: string;
  description: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { required: boolean; description: string; content: Record<string, MediaType> };
  responses: Record<string, Response | Reference>;
}

export type PathItem = Partial<Record<"get" | "head" | "post" | "put" | "patch" | "delete" | "options", Operation>>;

interface SecurityScheme {
  type: "apiKey";
  in: "header";
  name: string;
  description: string;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, PathItem | Reference>;
  components: {
    schemas: Record<string, Schema>;
    securitySchemes: Record<string, SecurityScheme>;
    headers: Record<string, Header>;
    responses: Record<string, Response>;
  };
}

const OPENAPI_PATH = "/openapi.json";
const DOCS_PATH = "/docs";

const API_KEY_HEADER = "x-api-key";
const EXAMPLE_PIPE_ID = "3f0c2a9e-8b1d-4c5e-9a7f-1d2e3b4c5d6e";
const EXAMPLE_INSTANCE = `/pipes/${EXAMPLE_PIPE_ID}/trigger`;
const EXAMPLE_TRACE_ID = "9b2d7c4e-1f3a-4e8b-b6d5-0c1a2b3c4d5e";

/**
 * One example per problem code, worded as the edge words it. Keyed by every ProblemCode, so a code
 * added to PROBLEMS without an example fails to compile.
 */
const PROBLEM_EXAMPLES: Readonly<Record<ProblemCode, { detail: string; extensions?: Record<string, unknown>; instance?: string }>> = {
  api_key_missing: { detail: "send an API key in the X-Api-Key header" },
  api_key_invalid: { detail: "the API key is malformed or mistyped (its checksum does not match)" },
  api_key_deactivated: { detail: "the API key is deactivated; reactivate it or use another key" },
  api_key_expired: { detail: "the API key has expired; create a new key" },
  rate_limited: { detail: "this key's plan allows 10 requests per minute; retry in 42 seconds", extensions: { limit: 10 } },
  too_many_failed_authentications: { detail: "too many failed authentications from this address; retry in 42 seconds" },
  too_many_queued_runs: {
    detail: "this organization has 10000 runs queued or running, its most (MAX_QUEUED_RUNS_PER_ORGANIZATION); retry in 30 seconds",
    extensions: { limit: 10000 },
  },
  workspace_id_invalid: { detail: "the X-Workspace-Id header must be a UUID" },
  workspace_not_found: { detail: "workspace not found" },
  pipe_not_found: { detail: "pipe not found, not active, or without an HTTP trigger" },
  origin_not_allowed: { detail: "the origin https://unknown.example.com may not submit to this pipe" },
  not_multipart: { detail: 'send the document as multipart/form-data with one file part named "file"' },
  multipart_malformed: { detail: "the multipart body could not be read: Unexpected end of multipart data" },
  file_missing: { detail: 'the request has no file part named "file"' },
  file_part_unexpected: { detail: 'file parts must be named "file", got "document"' },
  too_many_files: { detail: 'send exactly one file part named "file"' },
  file_empty: { detail: "the file is empty" },
  file_too_large: { detail: "the file exceeds this pipe's limit of 10 MB (10485760 bytes)", extensions: { maxSizeMb: 10 } },
  file_name_invalid: { detail: "the file name holds control characters (NUL, line breaks, escapes) or unpaired surrogates; rename the file" },
  unsupported_format: {
    detail: "the file's format (gif) is not accepted by this pipe; accepted: pdf, png",
    extensions: { acceptedFormats: ["pdf", "png"], detectedFormat: "gif" },
  },
  idempotency_key_invalid: { detail: "the Idempotency-Key header must be 1 to 255 printable ASCII characters" },
  idempotency_key_reused: { detail: "this Idempotency-Key was used for a submission of another file" },
  idempotency_key_in_flight: { detail: "a submission with this idempotency key is in flight" },
  bad_request: { detail: "the request could not be understood" },
  permission_denied: { detail: "the API key may not do this" },
  not_found: { detail: "no route for GET /pipes", instance: "/pipes" },
  method_not_allowed: { detail: "GET is not allowed here; use POST" },
  request_timeout: { detail: "the request was not received in time", instance: "" },
  conflict: { detail: "the request conflicts with the current state of the resource" },
  expectation_failed: { detail: "only Expect: 100-continue is supported" },
  headers_too_large: { detail: "the request's headers exceed the server's limit", instance: "" },
  internal_error: { detail: "the server could not process the request" },
  service_unavailable: { detail: "the database is not reachable" },
  timeout: { detail: "a service did not answer in time" },
};

/** When a problem happens, where its title does not say it all; shown beside the title in the document. */
const PROBLEM_MEANINGS: Readonly<Partial<Record<ProblemCode, string>>> = {
  api_key_invalid: "the key is malformed, fails its checksum, is unknown or was deleted",
  api_key_deactivated: "the key was deactivated; it can be reactivated",
  api_key_expired: "the key's expiry time has passed",
  rate_limited:
    "the key made more requests this minute than its organization's plan allows; `limit` is the plan's requests per minute, `Retry-After` says when to retry",
  too_many_queued_runs:
    "the organization has as many runs queued or running as the service holds for one organization (from every source: submissions, email, splits, reruns); `limit` is that number, `Retry-After` says when to retry",
  workspace_id_invalid: "`X-Workspace-Id` is not a UUID",
  workspace_not_found: "no such workspace in the key's organization",
  pipe_not_found:
    "the pipe does not exist, is paused or deleted, has no HTTP trigger, or belongs to another workspace or organization (a pipeId that is not a UUID too)",
  origin_not_allowed: "an `Origin` header that the pipe's allowed origins do not list",
  not_multipart: "the body is not `multipart/form-data`",
  multipart_malformed: "the multipart body cannot be read",
  file_missing: "no file part named `file`",
  file_part_unexpected: "a file part with another name than `file`",
  too_many_files: "more than one file part",
  file_too_large: "the file is larger than the pipe's max size; `maxSizeMb` is that size (1 MB = 1,048,576 bytes)",
  unsupported_format:
    "the file's bytes are not one of the pipe's accepted formats; `acceptedFormats` lists them, `detectedFormat` is what the bytes are (null when unknown)",
  idempotency_key_invalid: "`Idempotency-Key` is not 1 to 255 printable ASCII characters",
  idempotency_key_reused: "the key was used, within 24 hours, for a submission to another pipe or of another file",
  idempotency_key_in_flight: "the first submission with this key is still in progress",
  bad_request: "a request the edge cannot take apart: a malformed header, body or HTTP message",
  not_found: "no such route",
  method_not_allowed: "another method than POST on a trigger path; `Allow` lists the methods",
  request_timeout: "the request was not received in time",
  conflict: "the request conflicts with the current state of a resource",
  expectation_failed: "an `Expect` header other than `100-continue`",
  headers_too_large: "the request's headers exceed the server's limit",
  internal_error: "a fault of the server; nothing internal is returned, and `traceId` finds it in the logs",
  service_unavailable: "the database or the document storage cannot be reached, or the server is shutting down; retry",
  timeout: "a service did not answer in time; retry",
};

/** The example of a 202 body; typed by the function that makes real ones. */
const ACCEPTED_EXAMPLE: ReturnType<typeof acceptedBody> = {
  runId: "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
  fileId: "7b2c3d4e-5f6a-4b7c-9d8e-0f1a2b3c4d5e",
  pipeId: EXAMPLE_PIPE_ID,
  workspaceId: "8c3d4e5f-6a7b-4c8d-8e9f-1a2b3c4d5e6f",
  status: "Queued",
  file: {
    name: "invoice.pdf",
    contentType: "application/pdf",
    format: "pdf",
    size: 48213,
    sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  },
  createdAt: "2026-01-15T09:30:00.000Z",
};

/** "x-workspace-id" -> "X-Workspace-Id": how the docs spell a header (HTTP compares them case-insensitively). */
function canonicalHeaderName(name: string): string {
  return name
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("-");
}

/** The distinct statuses of the problem catalogue, ascending. */
function problemStatuses(): number[] {
  return [...new Set(Object.values(PROBLEMS).map((problem) => problem.status))].sort((a, b) => a - b);
}

function problemCodesOf(status: number): ProblemCode[] {
  return (Object.keys(PROBLEMS) as ProblemCode[]).filter((code) => PROBLEMS[code].status === status);
}

/** The component name of the response for problems of `status`. */
export function problemResponseName(status: number): string {
  return `Problem${status}`;
}

const ref = (kind: string, name: string): Reference => ({ $ref: `#/components/${kind}/${name}` });

/** An example problem document, made by the same function as real ones. */
function exampleProblem(code: ProblemCode) {
  const { detail, extensions, instance } = PROBLEM_EXAMPLES[code];
  return problemDocument(new Problem(code, detail, extensions), instance ?? EXAMPLE_INSTANCE, EXAMPLE_TRACE_ID);
}

const plansText = Object.entries(DEFAULT_PLANS)
  .map(([plan, perMinute]) => `${plan} ${perMinute}`)
  .join(", ");

const HEADERS: Record<string, Header> = {
  "RateLimit-Limit": {
    description:
      `Requests per minute this API key may make, set by the organization's plan (by default: ${plansText}). `
      + "Sent on every response after the key is authenticated; keys on an unlimited plan get no rate-limit headers.",
    schema: { type: "integer", minimum: 1 },
  },
  "RateLimit-Remaining": { description: "Requests this key may still make in the current window.", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "When the current window ends, as Unix time in seconds.", schema: { type: "integer" } },
  "Retry-After": { description: "Seconds to wait before retrying (429 only).", schema: { type: "integer", minimum: 0 } },
  "Idempotent-Replayed": {
    description: "`true` when this 202 replays the first response to the same Idempotency-Key, pipe and file.",
    schema: { type: "string", enum: ["true"] },
  },
  "X-Request-Id": {
    description:
      "The request's id; problem documents carry it as `traceId`. With tracing on it is the request's OpenTelemetry trace id; "
      + "otherwise a valid `X-Request-Id` sent by the client is reused.",
    schema: { type: "string" },
  },
  Allow: { description: "The methods the path accepts (405 only).", schema: { type: "string" } },
};

const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"] as const;

/** Headers a problem response of `status` may carry, beside the ones every response carries. */
const PROBLEM_HEADERS: Partial<Record<number, string[]>> = { 405: ["Allow"], 429: ["Retry-After"] };

function headerRefs(names: readonly string[]): Record<string, Reference> {
  return Object.fromEntries(names.map((name) => [name, ref("headers", name)]));
}

const problemSchema: Schema = {
  type: "object",
  description: "An RFC 9457 problem document (`Content-Type: application/problem+json`). Every error of the edge is one.",
  properties: {
    type: { type: "string", format: "uri", description: `A stable URI per kind of problem: ${PROBLEM_TYPE_BASE}<code>.` },
    title: { type: "string", description: "A short summary, the same for every occurrence of the type." },
    status: { type: "integer", enum: problemStatuses(), description: "The HTTP status of the response." },
    detail: { type: "string", description: "What went wrong with this request." },
    instance: { type: "string", description: "The request path." },
    code: { type: "string", enum: Object.keys(PROBLEMS), description: "The stable snake_case id of the problem; the last segment of `type`." },
    traceId: { type: "string", description: "The request's id, also in the X-Request-Id header; quote it to support." },
    maxSizeMb: { type: "integer", description: "file_too_large: the pipe's limit in MB (1 MB = 1,048,576 bytes)." },
    acceptedFormats: { type: "array", items: { type: "string" }, description: "unsupported_format: the format ids the pipe accepts." },
    detectedFormat: { type: ["string", "null"], description: "unsupported_format: the format recognised from the bytes, or null." },
    limit: {
      type: "integer",
      description: "rate_limited: the key's requests per minute; too_many_queued_runs: the organization's most runs queued or running.",
    },
  },
  required: ["type", "title", "status", "detail", "instance", "code", "traceId"],
};

function problemResponse(status: number): Response {
  const codes = problemCodesOf(status);
  return {
    description: codes
      .map((code) => `- \`${code}\`: ${PROBLEMS[code].title}${PROBLEM_MEANINGS[code] === undefined ? "" : `: ${PROBLEM_MEANINGS[code]}`}.`)
      .join("\n"),
    headers: headerRefs(["X-Request-Id", ...RATE_LIMIT_HEADERS, ...(PROBLEM_HEADERS[status] ?? [])]),
    content: {
      "application/problem+json": {
        schema: ref("schemas", "Problem"),
        examples: Object.fromEntries(codes.map((code) => [code, { summary: PROBLEMS[code].title, value: exampleProblem(code) }])),
      },
    },
  };
}

const pipeIdParameter: Parameter = {
  name: "pipeId",
  in: "path",
  required: true,
  description: triggerParamsSchema.properties.pipeId.description,
  schema: { type: triggerParamsSchema.properties.pipeId.type },
};

const originParameter: Parameter = {
  name: "Origin",
  in: "header",
  required: false,
  description:
    "Sent by browsers. When present it must be one of the pipe's allowed origins (or the pipe allows `*`), else 403 `origin_not_allowed`. "
    + "Server-to-server clients send none.",
  schema: { type: "string" },
};

/** Ready-to-run examples of a submission; the tests run them against the edge as written. */
export function curlExamples(): string[] {
  const url = '"$DOCPIPE_URL/pipes/$PIPE_ID/trigger"';
  const keyHeader = `-H "${canonicalHeaderName(API_KEY_HEADER)}: $DOCPIPE_API_KEY"`;
  const file = '-F "file=@invoice.pdf;type=application/pdf"';
  return [
    `curl -i ${url} \\\n  ${keyHeader} \\\n  ${file}`,
    `curl -i ${url} \\\n  ${keyHeader} \\\n  -H "X-Workspace-Id: $WORKSPACE_ID" \\\n  -H "Idempotency-Key: invoice-2026-0042" \\\n  ${file}`,
  ];
}

/** What the route schema does not say about the submission: its words, its security and its headers' spelling. */
const submitDocs = {
  summary: "Submit a document to a pipe",
  description: [
    "Submits one document to the pipe; a run is created for it and queued. `/pipes/{pipeId}/trigger` and `/pipes/{pipeId}/http-trigger` "
      + "are two names of the same operation.",
    "Checks run in this order, and nothing of the body is stored before the first four pass: API key (401), rate limit (429), "
      + "workspace and pipe (404; a pipeId that is not a UUID is also 404), origin (403), then the body (400).",
    "The body is `multipart/form-data` with exactly one file part named `file`, sent with a file name and a content type. "
      + "Its format is recognised by its bytes, not by its name, and must be one of the pipe's accepted formats; its size must not exceed "
      + "the pipe's Max size (MB), where 1 MB = 1,048,576 bytes. Other form fields are ignored.",
    "Send `Idempotency-Key` to make retries safe. Within 24 hours and one organization, a repeat with the same key, pipe and file replays "
      + "the first 202 (same `runId`) with `Idempotent-Replayed: true`; the same key with another pipe or file is 422 `idempotency_key_reused`; "
      + "a repeat while the first is still in progress is 409 `idempotency_key_in_flight`. Only a 202 uses up a key, so after an error "
      + "retry with the same key.",
    "Examples: set `DOCPIPE_URL` to the service's address, `DOCPIPE_API_KEY` to your key and `PIPE_ID` to the pipe "
      + "(and, for the second, `WORKSPACE_ID` to one of your organization's workspaces).",
    ...curlExamples().map((example) => "```sh\n" + example + "\n```"),
  ].join("\n\n"),
  tags: ["Trigger"],
  security: [{ ApiKey: [] }],
  // Headers as the docs spell them (HTTP compares them case-insensitively); the key is the security scheme instead.
  headers: {
    type: "object",
    properties: {
      ...Object.fromEntries(Object.entries(triggerHeadersSchema.properties).map(([name, schema]) => [canonicalHeaderName(name), schema])),
      Origin: { type: "string", description: originParameter.description },
    },
  },
};

const submitRequestBody: NonNullable<Operation["requestBody"]> = {
  required: true,
  description: 'One file part named "file", with a file name and a content type: `curl -F "file=@invoice.pdf;type=application/pdf"`.',
  content: {
    "multipart/form-data": {
      schema: {
        type: "object",
        properties: { file: { type: "string", format: "binary", contentMediaType: "application/octet-stream", description: "The document." } },
        required: ["file"],
      },
    },
  },
};

/** The submission's answers: the 202 and a problem response per status of the catalogue (405 answers other methods, never a POST). */
function submitResponses(): Operation["responses"] {
  return {
    202: {
      description: "Accepted: a run was created for the document and queued.",
      headers: headerRefs(["X-Request-Id", ...RATE_LIMIT_HEADERS, "Idempotent-Replayed"]),
      content: { "application/json": { schema: ref("schemas", "Accepted"), examples: { accepted: { summary: "A queued run", value: ACCEPTED_EXAMPLE } } } },
    },
    ...Object.fromEntries(
      problemStatuses()
        .filter((status) => status !== PROBLEMS.method_not_allowed.status)
        .map((status) => [status, ref("responses", problemResponseName(status))]),
    ),
  };
}

const CORS_RESPONSE_HEADERS: Record<string, Header> = {
  "Access-Control-Allow-Origin": { description: "The requesting origin, echoed.", schema: { type: "string" } },
  "Access-Control-Allow-Methods": { description: "`POST`.", schema: { type: "string" } },
  "Access-Control-Allow-Headers": { description: `\`${CORS_ALLOWED_HEADERS.join(", ")}\`.`, schema: { type: "string" } },
  Vary: { description: "Includes `Origin`.", schema: { type: "string" } },
};

const preflightOperation: Operation = {
  summary: "CORS preflight",
  description: [
    "Browsers send this before a cross-origin POST (the `X-Api-Key` header makes one necessary); it needs no key. "
      + "The answer comes from the pipe's allowed origins: an allowed origin is echoed in `Access-Control-Allow-Origin` with `Vary: Origin`, "
      + `and the POST's response lets the page's script read the headers ${CORS_EXPOSED_HEADERS.join(", ")}.`,
    "An origin that is not allowed gets no CORS headers, so the browser blocks the POST. A pipe with no allowed origins accepts no browser "
      + `at all. A change of a pipe's allowed origins reaches browsers within ${ORIGIN_CACHE_TTL_MS / 1000} seconds.`,
  ].join("\n\n"),
  tags: ["Trigger"],
  parameters: [
    pipeIdParameter,
    { ...originParameter, required: true, description: "The page's origin." },
    { name: "Access-Control-Request-Method", in: "header", required: true, description: "`POST`.", schema: { type: "string" } },
    { name: "Access-Control-Request-Headers", in: "header", required: false, description: "The headers the POST will send.", schema: { type: "string" } },
  ],
  responses: {
    204: { description: "The origin may submit to this pipe.", headers: CORS_RESPONSE_HEADERS },
    404: ref("responses", problemResponseName(404)),
  },
};

/** The methods a trigger path answers with 405 `method_not_allowed` (HEAD as GET, without a body). */
const NOT_ALLOWED_METHODS = ["get", "head", "put", "patch", "delete"] as const;

const methodNotAllowedOperation: Operation = {
  summary: "Any other method: 405",
  description:
    "A trigger path takes POST, and OPTIONS for a CORS preflight. Any other method is answered 405 `method_not_allowed`, with `Allow: POST, OPTIONS`, before a key is checked.",
  tags: ["Trigger"],
  parameters: [pipeIdParameter],
  responses: { 405: ref("responses", problemResponseName(405)) },
};

function healthDocs(summary: string, status: string) {
  return {
    summary,
    description: `${summary}. Needs no key.`,
    tags: ["Health"],
    // @fastify/swagger takes the response's description from x-response-description and leaves the schema without one.
    response: { 200: { "x-response-description": summary, type: "object", properties: { status: { type: "string", enum: [status] } }, required: ["status"] } },
  };
}

/**
 * The documented routes, by method and URL as registered, with what their schemas leave out. Any
 * other route (the 405 answer to other methods on the trigger paths, HEAD, the docs' own) is hidden.
 */
const DOCUMENTED_ROUTES: Readonly<Record<string, object>> = {
  "POST /pipes/:pipeId/trigger": submitDocs,
  "POST /pipes/:pipeId/http-trigger": submitDocs,
  "GET /healthz": healthDocs("The process is up", "ok"),
  "GET /readyz": healthDocs("The service can take submissions", "ready"),
};

/** The trigger's two paths, as OpenAPI spells them. */
const TRIGGER_PATHS = ["/pipes/{pipeId}/trigger", "/pipes/{pipeId}/http-trigger"] as const;

/**
 * Adds to the derived document what no route schema holds: the multipart body (the route reads it
 * itself), the problem responses, the CORS preflight, which @fastify/cors answers for any path, and
 * the 405 to other methods (their route is hidden: its one schema would read as an operation that works).
 */
function completeDocument(document: OpenApiDocument): OpenApiDocument {
  for (const path of TRIGGER_PATHS) {
    const item = document.paths[path] as PathItem;
    item.post = { ...item.post!, requestBody: submitRequestBody, responses: submitResponses() };
    item.options = preflightOperation;
    for (const method of NOT_ALLOWED_METHODS) item[method] = methodNotAllowedOperation;
  }
  const ready = (document.paths["/readyz"] as PathItem).get!;
  ready.responses = { ...ready.responses, 503: ref("responses", problemResponseName(503)) };
  return document;
}

const swaggerOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: "3.1.0",
    info: {
      title: "docpipe trigger API",
      // Paths carry no version; this is the version of the document.
      version: "1.0.0",
      description: [
        "Submit documents to a pipe over plain HTTP; each accepted submission creates a run that processes the document.",
        "Every request to the trigger needs an API key in the `X-Api-Key` header. Successful responses are JSON; every error is an "
          + "RFC 9457 problem document (`application/problem+json`) with a stable `code`.",
        `This document is served at \`${OPENAPI_PATH}\`, and as a page at \`${DOCS_PATH}\`.`,
      ].join("\n\n"),
    },
    servers: [{ url: "/", description: "This server" }],
    tags: [
      { name: "Trigger", description: "The one endpoint for external use." },
      { name: "Health", description: "Liveness and readiness probes." },
    ],
    components: {
      schemas: { Accepted: acceptedSchema, Problem: problemSchema },
      securitySchemes: {
        ApiKey: {
          type: "apiKey",
          in: "header",
          name: canonicalHeaderName(API_KEY_HEADER),
          description:
            `${triggerHeadersSchema.properties[API_KEY_HEADER].description} `
            + "A missing, malformed, unknown, deleted, deactivated or expired key is 401. Keys are made in Settings, API keys.",
        },
      },
      headers: HEADERS,
      responses: Object.fromEntries(problemStatuses().map((status) => [problemResponseName(status), problemResponse(status)])),
    },
  } as unknown as FastifyDynamicSwaggerOptions["openapi"],
  transform: ({ schema, url, route }) => {
    const docs = DOCUMENTED_ROUTES[`${[route.method].flat()[0]} ${url}`];
    return { schema: docs === undefined ? { ...schema, hide: true } : { ...schema, ...docs }, url };
  },
  transformObject: (documentObject) => {
    if (!("openapiObject" in documentObject)) throw new Error("the options describe an OpenAPI document");
    return completeDocument(documentObject.openapiObject as unknown as OpenApiDocument) as unknown as typeof documentObject.openapiObject;
  },
};

/**
 * Only what this server serves may load: the page runs swagger-ui's bundled script (no inline
 * script) and reads the document from here. Inline styles are allowed, as swagger-ui sets some;
 * they can fetch nothing, since fonts and images from elsewhere are refused.
 */
const DOCS_CSP =
  "default-src 'none'; base-uri 'none'; connect-src 'self'; img-src 'self' data:; script-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'";

/**
 * GET /openapi.json and GET /docs: public, no key. Registered at the root (fastify-plugin) before
 * the routes, so it sees every route as it is added.
 */
export const apiDocs = fastifyPlugin(async (app) => {
  await app.register(fastifySwagger, swaggerOptions);
  await app.register(fastifySwaggerUi, {
    routePrefix: DOCS_PATH,
    staticCSP: DOCS_CSP,
    theme: { title: "docpipe trigger API" },
    uiConfig: { deepLinking: true, layout: "BaseLayout" },
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.type("application/json; charset=utf-8").send(app.swagger()));
});
