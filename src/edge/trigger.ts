import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import fastifyCors from "@fastify/cors";
import fastifyMultipart from "@fastify/multipart";
import fastifyRateLimit from "@fastify/rate-limit";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import type { Redis } from "ioredis";
import type { AuthenticateKeyResponse } from "../../gen/docpipe/v1/key_service_pb.js";
import type { ResolveTriggerResponse } from "../../gen/docpipe/v1/pipe_service_pb.js";
import type { Run } from "../../gen/docpipe/v1/run_pb.js";
import type { ServiceClients } from "../clients.ts";
import type { FileStore } from "../storage/file-store.ts";
import { corsDelegator, isOriginAllowed } from "./cors.ts";
import { Problem, problemFromConnectError } from "./problems.ts";
import { acceptedSchema, triggerHeadersSchema, triggerParamsSchema } from "./schemas.ts";
import { receiveFile } from "./upload.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's key, once authenticated. */
    apiKey?: AuthenticateKeyResponse;
    /** The target pipe's trigger, once resolved. */
    pipeTrigger?: ResolveTriggerResponse;
  }
}

export interface TriggerOptions {
  clients: ServiceClients;
  store: FileStore;
  /** Shared rate-limit counters across edge processes; in memory when absent. */
  redis: Redis | undefined;
}

/** The 202 body: what a client needs to find its run later (via a callback or support). */
export function acceptedBody(run: Run) {
  const file = run.file!;
  return {
    runId: run.id,
    fileId: file.id,
    pipeId: run.pipeId,
    workspaceId: run.workspaceId,
    // A submission's response describes the run as it was accepted; replays return the same.
    status: "Queued",
    file: { name: file.name, contentType: file.contentType, format: file.format, size: Number(file.size), sha256: file.sha256 },
    createdAt: timestampDate(run.createTime!).toISOString(),
  };
}

/** Calls a service; its errors become problems. */
async function call<T>(rpc: Promise<T>): Promise<T> {
  try {
    return await rpc;
  } catch (error) {
    throw error instanceof ConnectError ? problemFromConnectError(error) : error;
  }
}

/** A header's value; repeated headers come joined with ", " (and then fail their own checks). */
function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * POST /pipes/{pipeId}/trigger and /pipes/{pipeId}/http-trigger. Checks run in the order of
 * DECISIONS.md, all before a byte of the body is read: key (401), rate limit (429), workspace and
 * pipe (404), origin (403); then the body (400).
 */
export const triggerRoutes: FastifyPluginAsync<TriggerOptions> = async (app, { clients, store, redis }) => {
  await app.register(fastifyCors, { hook: "preHandler", delegator: corsDelegator(clients.pipes) });
  // The body stays unread until every check has passed; its type is judged by the handler.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  await app.register(fastifyMultipart);
  await app.register(fastifyRateLimit, {
    global: false,
    enableDraftSpec: true,
    redis,
    nameSpace: "docpipe-rate-limit-",
    // Counters unreachable: let requests through rather than refuse every client; it is logged.
    skipOnError: true,
  });

  const authenticate: onRequestHookHandler = async (request) => {
    request.apiKey = await call(clients.keys.authenticateKey({ keyValue: headerValue(request, "x-api-key") ?? "" }));
  };

  const rateLimit = app.rateLimit({
    timeWindow: 60_000,
    keyGenerator: (request) => request.apiKey!.keyId,
    max: async (request) => request.apiKey!.rateLimitPerMinute,
    allowList: (request) => request.apiKey!.rateLimitPerMinute === 0,
    errorResponseBuilder: (_request, context) =>
      new Problem("rate_limited", `this key's plan allows ${context.max} requests per minute; retry in ${context.after}`, { limit: context.max }),
  });

  const resolvePipe: onRequestHookHandler = async (request) => {
    const { pipeId } = request.params as { pipeId: string };
    request.pipeTrigger = await call(
      clients.pipes.resolveTrigger({
        organizationId: request.apiKey!.organizationId,
        workspaceId: headerValue(request, "x-workspace-id") ?? "",
        pipeId,
      }),
    );
  };

  const checkOrigin: onRequestHookHandler = async (request) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !isOriginAllowed(request.pipeTrigger!.trigger!.allowedOrigins, origin)) {
      throw new Problem("origin_not_allowed", `the origin ${origin.slice(0, 200)} may not submit to this pipe`);
    }
  };

  // RateLimit-Reset as Unix seconds (DECISIONS.md); the plugin writes seconds from now.
  app.addHook("onSend", async (_request, reply) => {
    const reset = reply.getHeader("ratelimit-reset");
    if (reset !== undefined) reply.header("ratelimit-reset", Math.ceil(Date.now() / 1000) + Number(reset));
  });

  const submit = async (request: FastifyRequest, reply: FastifyReply) => {
    const apiKey = request.apiKey!;
    const { pipeId, pipelineVersion, trigger } = request.pipeTrigger!;
    const organizationId = apiKey.organizationId;
    const idempotencyKey = headerValue(request, "idempotency-key");
    const claim = idempotencyKey === undefined
      ? undefined
      : await call(clients.runs.claimIdempotencyKey({ organizationId, idempotencyKey, pipeId }));
    const previousRun = claim?.claimed === false ? claim.previousRun! : undefined;
    if (previousRun !== undefined && previousRun.pipeId !== pipeId) {
      throw new Problem("idempotency_key_reused", "this Idempotency-Key was used for a submission to another pipe");
    }
    try {
      const file = await receiveFile(request, store, trigger!);
      if (previousRun !== undefined) {
        await store.discard(file.staged);
        if (previousRun.file!.sha256 !== file.staged.sha256) {
          throw new Problem("idempotency_key_reused", "this Idempotency-Key was used for a submission of another file");
        }
        return reply.code(202).header("idempotent-replayed", "true").send(acceptedBody(previousRun));
      }
      // Stored before the run is recorded, so a worker never meets a run without its bytes. If the
      // run cannot be recorded the bytes stay: a concurrent request may be recording the same
      // content, and the orphan sweeper removes bytes that no file row names.
      await store.commit(file.staged);
      const { run } = await call(clients.runs.createRun({
        organizationId,
        pipeId,
        pipelineVersion,
        apiKeyId: apiKey.keyId,
        idempotencyKey: idempotencyKey ?? "",
        file: { name: file.name, contentType: file.contentType, format: file.format, size: BigInt(file.staged.size), sha256: file.staged.sha256 },
      }));
      return reply.code(202).send(acceptedBody(run!));
    } catch (error) {
      if (claim?.claimed) {
        await clients.runs.releaseIdempotencyKey({ organizationId, idempotencyKey: idempotencyKey! }).catch((releaseError: unknown) =>
          request.log.warn({ err: releaseError }, "could not release an idempotency key; it frees itself when its lease ends"),
        );
      }
      throw error;
    }
  };

  for (const url of ["/pipes/:pipeId/trigger", "/pipes/:pipeId/http-trigger"]) {
    app.post(url, {
      schema: { params: triggerParamsSchema, headers: triggerHeadersSchema, response: { 202: acceptedSchema } },
      onRequest: [authenticate, rateLimit, resolvePipe, checkOrigin],
    }, submit);
  }
};
