import { randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import type { ServiceClients } from "../clients.ts";
import type { Logger } from "../logger.ts";
import type { FileStore } from "../storage/file-store.ts";
import { Problem, problemDocument, problemFromConnectError, type ProblemCode } from "./problems.ts";
import { triggerRoutes } from "./trigger.ts";

export interface EdgeDeps {
  clients: ServiceClients;
  store: FileStore;
  log: Logger;
  /** Resolves when the service can take submissions (the database answers); rejects otherwise. */
  ready: () => Promise<void>;
  redis?: Redis | undefined;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Fastify's own errors (routing, body parsing, validation) as problems. */
function problemFromFastifyError(error: FastifyError): Problem {
  const status = error.statusCode ?? 500;
  if (error.validation !== undefined) return new Problem("bad_request", error.message);
  if (status >= 500) return new Problem("internal_error", "the server could not process the request");
  const byStatus: Partial<Record<number, ProblemCode>> = { 404: "not_found", 405: "method_not_allowed", 413: "bad_request", 415: "bad_request" };
  return new Problem(byStatus[status] ?? "bad_request", error.message);
}

function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof ConnectError) return problemFromConnectError(error);
  if (error instanceof Error && "statusCode" in error) return problemFromFastifyError(error as FastifyError);
  return new Problem("internal_error", "the server could not process the request");
}

function sendProblem(problem: Problem, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  // A body left unread (a refused 100 MB upload) is not drained: the connection closes instead.
  if (!request.raw.complete) reply.header("connection", "close");
  return reply
    .code(problem.statusCode)
    .headers(problem.headers)
    .type("application/problem+json")
    .send(problemDocument(problem, request.url.split("?")[0]!, String(request.id)));
}

/** The public REST edge, ready to `listen` or to `inject` in tests. */
export async function buildApp(deps: EdgeDeps) {
  const app = Fastify({
    loggerInstance: deps.log,
    genReqId: (request) => {
      const given = request.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Keeps a slow or stalled client from holding a connection for ever.
    requestTimeout: 15 * 60_000,
    return503OnClosing: true,
  });

  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });

  app.setErrorHandler((error, request, reply) => {
    const problem = toProblem(error);
    if (problem.statusCode >= 500) request.log.error({ err: error }, "request failed");
    return sendProblem(problem, request, reply);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(new Problem("not_found", `no route for ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}`), request, reply),
  );

  app.get("/healthz", { schema: { response: { 200: { type: "object", properties: { status: { type: "string" } } } } } }, async () => ({ status: "ok" }));
  app.get("/readyz", { schema: { response: { 200: { type: "object", properties: { status: { type: "string" } } } } } }, async () => {
    try {
      await deps.ready();
    } catch {
      throw new Problem("service_unavailable", "the database is not reachable");
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

  await app.register(triggerRoutes, { clients: deps.clients, store: deps.store, redis: deps.redis });
  return app;
}
