import { randomUUID } from "node:crypto";
import Fastify from "fastify";
import type { Redis } from "ioredis";
import type { ServiceClients } from "../../api/clients.ts";
import { type Config, loadConfig } from "../../platform/config.ts";
import type { Logger } from "../../platform/logger.ts";
import type { Metrics } from "../../platform/observability/metrics.ts";
import { endRequestSpanOnClose, startRequestSpan, withinRequestSpan } from "../../platform/observability/request-span.ts";
import { tracingOn } from "../../platform/observability/tracing.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";
import { refusedPreflightDetail } from "./cors.ts";
import { InFlight } from "./in-flight.ts";
import { observeEdge } from "./request-metrics.ts";
import { apiDocs } from "./openapi.ts";
import { Problem } from "./problems.ts";
import { answerClientError, answerExpectation } from "./raw-answers.ts";
import { sendProblem, toProblem } from "./problem-replies.ts";
import { drainOnClose } from "./shutdown.ts";
import { healthRoutes } from "./health.ts";
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

  app.server.on("checkExpectation", (request, response) => answerExpectation(app.log, request, response));
  if (tracingOn()) {
    // First of all hooks, so the hooks and the handler after it run within the request's span.
    app.addHook("onRequest", (request, reply, done) => withinRequestSpan(request.raw, reply.raw, request.routeOptions.url ?? "unmatched", done));
  }
  app.decorateRequest("problemCode", "");
  if (deps.metrics) await app.register(observeEdge, { metrics: deps.metrics });
  const submissions = new InFlight();
  const shutdown = drainOnClose(app, settings.shutdownTimeoutMs, submissions);
  // A callback hook: an async one costs a promise per request, and this one waits for nothing.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    if (shutdown.closing) {
      reply.header("connection", "close");
      return done(new Problem("service_unavailable", "the server is shutting down; retry", {}, { "retry-after": "1" }));
    }
    if (request.raw.httpVersion === "1.1" && request.headers.host === undefined) {
      return done(new Problem("bad_request", "an HTTP/1.1 request needs a Host header"));
    }
    done();
  });

  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    // The cause (a bug, a service's failure) is logged with the request id; the client sees only the
    // problem. Other 5xx (database unreachable, shutting down) are expected in operation: a warning.
    if (problem.statusCode === 500) request.log.error({ err: problem.cause ?? error, code: problem.code }, "request failed");
    else if (problem.statusCode > 500) request.log.warn({ err: problem.cause ?? error, code: problem.code }, "request failed");
    return sendProblem(problem, request, reply);
  });
  app.setNotFoundHandler((request, reply) => {
    const detail = refusedPreflightDetail(request) ?? `no route for ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}`;
    return sendProblem(new Problem("not_found", detail), request, reply);
  });

  // Before any route, so the OpenAPI document sees them all.
  await app.register(apiDocs);
  await app.register(healthRoutes, { ready: deps.ready });

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
