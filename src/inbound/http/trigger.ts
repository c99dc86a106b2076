import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import fastifyCors from "@fastify/cors";
import fastifyRateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import type { AuthenticateKeyResponse, ResolveTriggerResponse } from "../../../gen/docpipe/v1/trigger_service_pb.js";
import type { Run } from "../../../gen/docpipe/v1/run_pb.js";
import type { ServiceClients } from "../../api/clients.ts";
import type { Config } from "../../platform/config.ts";
import { TRIGGER_PERMISSION } from "../../platform/keys/permissions.ts";
import { stepTiming } from "../../platform/observability/step-timing.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";
import { isStorageOutage } from "../../data/storage/outages.ts";
import { clientAddress } from "./client-address.ts";
import { corsDelegator, isOriginAllowed, refusalCorsHeaders } from "./cors.ts";
import type { InFlight } from "./in-flight.ts";
import { Problem, problemFromConnectError } from "./problems.ts";
import { WindowCounterStore } from "./rate-limit-store.ts";
import { acceptedSchema, triggerHeadersSchema, triggerParamsSchema } from "./schemas.ts";
import { MULTIPART_BODY, receiveFile } from "./upload.ts";

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
  store: DocumentStore;
  /** Shared rate-limit counters across edge processes; in memory when absent. */
  redis: Redis | undefined;
  /** Failed authentications per client address and minute before 429; 0: no limit. */
  authFailuresPerMinute: number;
  /** Whose X-Forwarded-For is believed for the failed-authentication limit. */
  trustProxy: Config["trustProxy"];
  /** Submissions being handled; shutdown waits for them to clean up. */
  inFlight: InFlight;
}

const IPV6_CLIENT_PREFIX = 64;

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

/** How many times the header `name` (lower case) was sent. */
function countHeader(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2)
    if (rawHeaders[index]!.length === name.length && rawHeaders[index]!.toLowerCase() === name) count++;
  return count;
}

/** A header's value; repeated headers come joined with ", " (and then fail their own checks). */
function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * POST /pipes/{pipeId}/trigger and /pipes/{pipeId}/http-trigger. Checks run in a fixed order, all
 * before a byte of the body is read, so a client learns the most basic fault first and nothing is
 * stored for a refused request: key (401), rate limit (429), workspace and pipe (404), origin (403);
 * then the body (400).
 */
export const triggerRoutes: FastifyPluginAsync<TriggerOptions> = async (app, { clients, store, redis, authFailuresPerMinute, trustProxy, inFlight }) => {
  /** The address failures and preflight lookups are counted against; IPv6 by its /64 (one host usually holds a whole one). */
  const clientOf = (request: FastifyRequest) => normalizeIP(clientAddress(request, trustProxy), IPV6_CLIENT_PREFIX);
  const cors = corsDelegator(clients.trigger, clientOf);
  await app.register(fastifyCors, { hook: "preHandler", delegator: cors });
  // The body stays unread until every check has passed; its type is judged by the handler.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  app.addContentTypeParser("multipart/form-data", (_request, _payload, done) => done(null, MULTIPART_BODY));
  await app.register(fastifyRateLimit, {
    global: false,
    enableDraftSpec: true,
    redis,
    ...(redis === undefined ? { store: WindowCounterStore } : {}),
    nameSpace: "docpipe-rate-limit-",
    // Counters unreachable: let requests through rather than refuse every client; it is logged.
    skipOnError: true,
  });

  // Counted only when authentication fails, so a valid key is never held back by its address's
  // failures; unknown keys are cheap to refuse (checksum, then the key service's memory of misses).
  const failedAuthentications = app.createRateLimit({
    timeWindow: 60_000,
    max: authFailuresPerMinute,
    keyGenerator: (request) => `auth-failures-${clientOf(request)}`,
  });

  const authenticate = async (request: FastifyRequest) => {
    try {
      request.apiKey = await clients.trigger.authenticateKey({ keyValue: headerValue(request, "x-api-key") ?? "" });
    } catch (caught) {
      const error = caught instanceof ConnectError ? problemFromConnectError(caught) : caught;
      if (error instanceof Problem && error.statusCode === 401 && authFailuresPerMinute > 0) {
        const limit = await failedAuthentications(request);
        if (!limit.isAllowed && limit.isExceeded) {
          throw new Problem(
            "too_many_failed_authentications",
            `too many failed authentications from this address; retry in ${limit.ttlInSeconds} seconds`,
            {},
            { "retry-after": String(limit.ttlInSeconds) },
          );
        }
      }
      throw error;
    }
  };

  const checkPermission = (request: FastifyRequest) => {
    if (!request.apiKey!.permissions.includes(TRIGGER_PERMISSION)) {
      throw new Problem("permission_denied", `this API key lacks the ${TRIGGER_PERMISSION} permission`);
    }
  };

  const rateLimit = app.rateLimit({
    timeWindow: 60_000,
    keyGenerator: (request) => request.apiKey!.keyId,
    max: async (request) => request.apiKey!.rateLimitPerMinute,
    errorResponseBuilder: (_request, context) =>
      new Problem("rate_limited", `this key's plan allows ${context.max} requests per minute; retry in ${context.after}`, { limit: context.max }),
  });

  const resolvePipe = async (request: FastifyRequest) => {
    const { pipeId } = request.params as { pipeId: string };
    const workspaceId = headerValue(request, "x-workspace-id");
    // Only a missing header means the default workspace; an empty one names no workspace.
    if (workspaceId?.trim() === "")
      throw new Problem("workspace_id_invalid", "X-Workspace-Id is empty: send a workspace id, or leave the header out for the default workspace");
    request.pipeTrigger = await clients.trigger.resolveTrigger({
      organizationId: request.apiKey!.organizationId,
      workspaceId: workspaceId ?? "",
      pipeId,
      allowedPipeIds: request.apiKey!.allowedPipeIds,
      allowedWorkspaceIds: request.apiKey!.allowedWorkspaceIds,
    });
  };

  const checkOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && !isOriginAllowed(request.pipeTrigger!.trigger!.allowedOrigins, origin)) {
      throw new Problem("origin_not_allowed", `the origin ${origin.slice(0, 200)} may not submit to this pipe`);
    }
  };

  /**
   * The checks, in their order, as one hook (each hook costs Fastify a turn and a promise). A key
   * whose plan has no limit does not reach the rate limiter at all.
   */
  const checkSubmission = async (request: FastifyRequest, reply: FastifyReply) => {
    stepTiming?.begin(request);
    let timed = stepTiming?.now();
    await authenticate(request);
    timed = stepTiming?.since("checks: key", timed!);
    if (request.apiKey!.rateLimitPerMinute !== 0) await rateLimit.call(app, request, reply);
    timed = stepTiming?.since("checks: rate limit", timed!);
    checkPermission(request);
    await resolvePipe(request);
    checkOrigin(request);
    stepTiming?.since("checks: permission, pipe, origin", timed!);
  };
  if (stepTiming !== undefined) {
    const timing = stepTiming;
    app.addHook("onResponse", (request, reply, done) => {
      timing.end("reply", reply);
      timing.end("total, from the first check", request);
      done();
    });
  }

  // RateLimit-Reset as Unix seconds, so a client need not know when the response was sent; the plugin writes seconds from now.
  app.addHook("onSend", (_request, reply, payload, done) => {
    const reset = reply.getHeader("ratelimit-reset");
    if (reset !== undefined) reply.header("ratelimit-reset", Math.ceil(Date.now() / 1000) + Number(reset));
    done(null, payload);
  });

  // The rate limit answers before the pipe is resolved, so before the CORS hook: its 429 gets the
  // headers here. A callback hook: every other answer passes without a promise of its own.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (reply.statusCode !== 429) return done(null, payload);
    refusalCorsHeaders(cors, request).then((headers) => {
      if (headers !== undefined) {
        const vary = reply.getHeader("vary");
        reply.headers(headers).header("vary", vary === undefined || vary === "" ? "Origin" : `${String(vary)}, Origin`);
      }
      done(null, payload);
    }, done);
  });

  const submit = async (request: FastifyRequest, reply: FastifyReply) => {
    const apiKey = request.apiKey!;
    const { pipeId, pipelineVersion, trigger } = request.pipeTrigger!;
    const organizationId = apiKey.organizationId;
    // Node joins a repeated Idempotency-Key into one value ("k1, k2"), a key of its own: refused instead.
    if (request.headers["idempotency-key"] !== undefined && countHeader(request.raw.rawHeaders, "idempotency-key") > 1) {
      throw new Problem("idempotency_key_invalid", "send one Idempotency-Key header");
    }
    const idempotencyKey = headerValue(request, "idempotency-key");
    const timed = stepTiming?.now();
    const claim = idempotencyKey === undefined ? undefined : await clients.trigger.claimIdempotencyKey({ organizationId, idempotencyKey, pipeId });
    const previousRun = claim?.claimed === false ? claim.previousRun! : undefined;
    if (previousRun !== undefined && previousRun.pipeId !== pipeId) {
      throw new Problem("idempotency_key_reused", "this Idempotency-Key was used for a submission to another pipe");
    }
    try {
      if (claim !== undefined) stepTiming?.since("idempotency claim", timed!);
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
      await store.commit(organizationId, file.staged).catch((error: unknown) => {
        if (!isStorageOutage(error)) throw error;
        throw new Problem("service_unavailable", "the document could not be stored; retry", {}, { "retry-after": "1" }, error);
      });
      const inserting = stepTiming?.now();
      const { run } = await clients.trigger.createRun({
        organizationId,
        pipeId,
        pipelineVersion,
        apiKeyId: apiKey.keyId,
        idempotencyKey: idempotencyKey ?? "",
        file: { name: file.name, contentType: file.contentType, format: file.format, size: BigInt(file.staged.size), sha256: file.staged.sha256 },
      });
      stepTiming?.since("CreateRun", inserting!);
      stepTiming?.begin(reply);
      return reply.code(202).send(acceptedBody(run!));
    } catch (error) {
      if (claim?.claimed) {
        await clients.trigger
          .releaseIdempotencyKey({ organizationId, idempotencyKey: idempotencyKey! })
          .catch((releaseError: unknown) =>
            request.log.warn({ err: releaseError }, "could not release an idempotency key; it frees itself when its lease ends"),
          );
      }
      throw error;
    }
  };

  for (const url of ["/pipes/:pipeId/trigger", "/pipes/:pipeId/http-trigger"]) {
    app.post(
      url,
      {
        schema: { params: triggerParamsSchema, headers: triggerHeadersSchema, response: { 202: acceptedSchema } },
        onRequest: checkSubmission,
      },
      (request, reply) => inFlight.track(() => submit(request, reply)),
    );
  }
};
