import { randomUUID } from "node:crypto";
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { ConnectError } from "@connectrpc/connect";
import Fastify, { type ConnectionError, type FastifyError, type FastifyReply, type FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import type { ServiceClients } from "../clients.ts";
import { type Config, loadConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import type { Metrics } from "../observability/metrics.ts";
import { endRequestSpanOnClose, startRequestSpan, withinRequestSpan } from "../observability/request-span.ts";
import { tracingOn } from "../observability/tracing.ts";
import type { DocumentStore } from "../storage/document-store.ts";
import { InFlight } from "./in-flight.ts";
import { observeEdge } from "./metrics.ts";
import { apiDocs } from "./openapi.ts";
import { Problem, problemDocument, problemFromConnectError, type ProblemCode } from "./problems.ts";
import { triggerRoutes } from "./trigger.ts";

export interface EdgeDeps {
  clients: ServiceClients;
  store: DocumentStore;
  log: Logger;
  /** Resolves when the service can take submissions (the database answers); rejects otherwise. */
  ready: () => Promise<void>;
  redis?: Redis | undefined;
  /** Edge settings (defaults: loadConfig's). */
  settings?: EdgeSettings;
  /** Where the edge counts its requests; none in tests that do not look. */
  metrics?: Metrics | undefined;
}

type EdgeSettings = Pick<Config, "trustProxy" | "authFailuresPerMinute" | "shutdownTimeoutMs">;

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Fastify's own errors (routing, body parsing, validation) as problems. */
function problemFromFastifyError(error: FastifyError): Problem {
  const status = error.statusCode ?? 500;
  if (error.validation !== undefined) return new Problem("bad_request", error.message);
  if (status >= 500) return new Problem("internal_error", "the server could not process the request", {}, {}, error);
  const byStatus: Partial<Record<number, ProblemCode>> = { 404: "not_found", 405: "method_not_allowed", 413: "bad_request", 415: "bad_request" };
  return new Problem(byStatus[status] ?? "bad_request", error.message);
}

function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof ConnectError) return problemFromConnectError(error);
  if (error instanceof Error && "statusCode" in error) return problemFromFastifyError(error as FastifyError);
  return new Problem("internal_error", "the server could not process the request", {}, {}, error);
}

/** How long a connection whose request body was refused stays half-open, so its client can read the answer. */
const LINGER_MS = 2_000;

/**
 * A lingering close (as Apache and nginx do) for a connection whose request body is left unread.
 * Node answers `Connection: close` with destroySoon(): FIN, then at once a close that, with unread
 * bytes in the kernel, sends a TCP reset, and a client still busy sending its body can lose the
 * answer to it. Here the socket stops reading (nothing more of the body is taken), sends FIN after
 * the answer, and is destroyed only after a grace period: by then the client has read the answer
 * and stopped sending.
 */
function closeWithoutDraining(request: IncomingMessage): void {
  // Node drains ("dumps") a body nobody has read once the response is sent; a read marks it as
  // being read, and backpressure then stops the socket when the request's small buffer is full.
  request.read(0);
  const socket = request.socket;
  socket.destroySoon = () => {
    socket.pause();
    socket.end();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

function sendProblem(problem: Problem, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  request.problemCode = problem.code;
  // A body left unread (a refused 100 MB upload) is not drained: the connection closes instead.
  if (!request.raw.complete) {
    reply.header("connection", "close");
    closeWithoutDraining(request.raw);
  }
  return reply
    .code(problem.statusCode)
    .headers(problem.headers)
    .type("application/problem+json")
    .send(problemDocument(problem, request.url.split("?")[0]!, String(request.id)));
}

/**
 * Requests Node's HTTP parser refuses (a malformed request line or header, oversized headers, a
 * stalled client) never reach a route; they get a problem document too, then the connection closes.
 * There is no parsed path, so `instance` is empty.
 */
function answerClientError(error: ConnectionError, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const problem =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new Problem("headers_too_large", "the request's headers exceed the server's limit")
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? new Problem("request_timeout", "the request was not received in time")
        : new Problem("bad_request", "the request is not well-formed HTTP/1.1");
  const traceId = randomUUID();
  const body = JSON.stringify(problemDocument(problem, "", traceId));
  // A response to HEAD has no content, even when the rest of the request could not be parsed.
  const isHead = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString("latin1") === "HEAD ";
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${problem.statusCode} ${STATUS_CODES[problem.statusCode]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${traceId}\r\nConnection: close\r\n\r\n${isHead ? "" : body}`,
    );
  }
  socket.destroy(error);
}

/** Node itself answers an Expect other than 100-continue with an empty 417, unless this listens. */
function answerExpectation(request: IncomingMessage, response: ServerResponse): void {
  const traceId = randomUUID();
  const problem = new Problem("expectation_failed", "only Expect: 100-continue is supported");
  const body = JSON.stringify(problemDocument(problem, (request.url ?? "").split("?")[0]!, traceId));
  response
    .writeHead(problem.statusCode, {
      "content-type": "application/problem+json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "x-request-id": traceId,
      connection: "close",
    })
    .end(body);
}

/** Believes X-Forwarded-For for `hops` proxies in front of the edge (as proxy-addr does for a number). */
function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

/** The public REST edge, ready to `listen` or to `inject` in tests. */
export async function buildApp(deps: EdgeDeps) {
  const settings = deps.settings ?? loadConfig({});
  const app = Fastify({
    loggerInstance: deps.log,
    // Whose X-Forwarded-For is believed for request.ip (failed-authentication limits); none by default.
    trustProxy: typeof settings.trustProxy === "number" ? trustHops(settings.trustProxy) : settings.trustProxy,
    // With tracing on, the request's id is its trace id: one id finds the trace and the logs.
    genReqId: (request) => {
      const traceId = startRequestSpan(request);
      if (traceId !== undefined) return traceId;
      const given = request.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Keeps a slow or stalled client from holding a connection for ever.
    requestTimeout: 15 * 60_000,
    // During shutdown the onRequest hook below answers with a problem document instead.
    return503OnClosing: false,
    // A pipeId of any length reaches the checks (401 before 404), not the router's not-found.
    routerOptions: { maxParamLength: 16 * 1024 },
    clientErrorHandler: answerClientError,
    // The onRequest hook refuses a missing Host instead, with a problem document rather than Node's empty 400.
    http: { requireHostHeader: false },
    // The router's own errors (a malformed percent-escape) skip hooks and the error handler.
    frameworkErrors: (error, request, reply) => {
      endRequestSpanOnClose(request.raw, reply.raw, "unmatched");
      return sendProblem(toProblem(error), request, reply.header("x-request-id", request.id));
    },
  });

  app.server.on("checkExpectation", answerExpectation);
  if (tracingOn()) {
    // First of all hooks, so the hooks and the handler after it run within the request's span.
    app.addHook("onRequest", (request, reply, done) => withinRequestSpan(request.raw, reply.raw, request.routeOptions.url ?? "unmatched", done));
  }
  app.decorateRequest("problemCode", "");
  if (deps.metrics) await app.register(observeEdge, { metrics: deps.metrics });
  let closing = false;
  const submissions = new InFlight();
  let cutTimer: NodeJS.Timeout | undefined;
  app.addHook("preClose", async () => {
    closing = true;
    // In-flight requests may finish until SHUTDOWN_TIMEOUT_MS; then their connections are cut (a
    // slow upload would otherwise hold shutdown for ever) and each handler removes what it staged.
    cutTimer = setTimeout(() => {
      if (submissions.count > 0) app.log.warn({ submissions: submissions.count }, "shutdown timeout reached: cutting the uploads still in flight");
      app.server.closeAllConnections();
    }, settings.shutdownTimeoutMs);
  });
  // Runs once the server has closed (every connection ended or cut): waits for the handlers' cleanup.
  app.addHook("onClose", async () => {
    clearTimeout(cutTimer);
    await submissions.idle();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (closing) {
      reply.header("connection", "close");
      throw new Problem("service_unavailable", "the server is shutting down; retry", {}, { "retry-after": "1" });
    }
    if (request.raw.httpVersion === "1.1" && request.headers.host === undefined) {
      throw new Problem("bad_request", "an HTTP/1.1 request needs a Host header");
    }
  });

  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    // The cause (a bug, a service's failure) is logged with the request id; the client sees only the
    // problem. Other 5xx (database unreachable, shutting down) are expected in operation: a warning.
    if (problem.statusCode === 500) request.log.error({ err: problem.cause ?? error, code: problem.code }, "request failed");
    else if (problem.statusCode > 500) request.log.warn({ err: problem.cause ?? error, code: problem.code }, "request failed");
    return sendProblem(problem, request, reply);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(new Problem("not_found", `no route for ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}`), request, reply),
  );

  // Before any route, so the OpenAPI document sees them all.
  await app.register(apiDocs);
  app.get("/healthz", { schema: { response: { 200: { type: "object", properties: { status: { type: "string" } } } } } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { response: { 200: { type: "object", properties: { status: { type: "string" } } } } } }, async () => {
    try {
      await deps.ready();
    } catch (error) {
      throw new Problem("service_unavailable", "the database is not reachable", {}, {}, error);
    }
    return { status: "ready" };
  });

  // The trigger paths answer other methods with 405 and Allow, not 404.
  app.route({
    method: ["GET", "PUT", "PATCH", "DELETE"],
    url: "/pipes/:pipeId/:trigger(^(?:http-)?trigger$)",
    schema: { params: { type: "object", properties: { pipeId: { type: "string" }, trigger: { type: "string" } } } },
    handler: async (request) => {
      throw new Problem("method_not_allowed", `${request.method} is not allowed here; use POST`, {}, { allow: "POST, OPTIONS" });
    },
  });

  await app.register(triggerRoutes, {
    clients: deps.clients,
    store: deps.store,
    redis: deps.redis,
    authFailuresPerMinute: settings.authFailuresPerMinute,
    trustProxy: settings.trustProxy,
    inFlight: submissions,
  });
  return app;
}
