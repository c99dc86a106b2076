import type { ServiceImpl } from "@connectrpc/connect";
import { Code, type ConnectError } from "@connectrpc/connect";
import type { StoredFile, TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { isDatabaseUnavailable } from "../data/db/errors.ts";
import { inTransaction } from "../data/db/transaction.ts";
import { WriteBatcher } from "../data/db/write-batcher.ts";
import { FILE_NAME_RULE, isValidFileName } from "../documents/formats/file-names.ts";
import { FORMAT_IDS, isFormatId } from "../documents/formats/format-ids.ts";
import { isWellFormedKeyValue, keyDigestBase64 } from "../platform/keys/key-value.ts";
import { findKeyCredentials, recordKeyUse } from "../data/repositories/keys.ts";
import { findEmailTrigger, findTriggerOrigins, pipeExists, resolveTrigger } from "../data/repositories/pipes.ts";
import * as idempotencyKeys from "../data/repositories/idempotency-keys.ts";
import * as runs from "../data/repositories/runs.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isSha256Hex, isUuid } from "../platform/ids.ts";
import { activeTraceparent } from "../platform/observability/tracing.ts";
import { isExpired, isKeyUseDue, LAST_USED_RESOLUTION_MS } from "../platform/keys/key-lifetime.ts";
import { rateLimitOf } from "./plans.ts";
import type { QueuedRunsCap } from "./queued-runs-cap.ts";
import { workspaceIdArgument } from "./workspace-id.ts";
import { requireRun, runMessage } from "./run-messages.ts";

/** What the edge turns into 404: every reason a submission cannot reach a pipe looks the same. */
const TRIGGER_NOT_FOUND_MESSAGE = "pipe not found, not active, or without an HTTP trigger";

/** How long a used Idempotency-Key replays its first submission: a day covers any client's retries. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claimed key may stay in flight: longer than the edge's request timeout (15 minutes), so
 * a submission still uploading never loses its key to a second one, and short enough that a crashed
 * submission does not block its key for a day.
 */
export const IDEMPOTENCY_LEASE_MS = 16 * 60 * 1000;
/** Claims retried when the record vanishes between the claim and the read (released meanwhile). */
const CLAIM_ATTEMPTS = 3;

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** An Idempotency-Key header value we accept: 1..255 printable ASCII characters. */
function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

function requireIdempotencyKey(key: string): void {
  if (!isValidIdempotencyKey(key)) {
    throw invalidArgument("idempotency_key", "idempotency_key must be 1 to 255 printable ASCII characters", "idempotency_key_invalid");
  }
}

/** The stored file a CreateRun request describes, checked. */
function validStoredFile(file: StoredFile | undefined, field = "file"): runs.NewFile {
  if (file === undefined) throw invalidArgument(field, `${field} is required`);
  // What the edge, the email trigger and the console refuse or rename before they call: no caller stores another name.
  if (!isValidFileName(file.name)) throw invalidArgument(`${field}.name`, `${field}.name must be ${FILE_NAME_RULE}`, "file_name_invalid");
  if (!isSha256Hex(file.sha256)) throw invalidArgument(`${field}.sha256`, `${field}.sha256 must be 64 lowercase hexadecimal characters`);
  if (file.size < 1n) throw invalidArgument(`${field}.size`, `${field}.size must be at least 1 byte`);
  // The format becomes a metrics label (step durations by format): only the known ids, so no caller can add series.
  if (!isFormatId(file.format)) throw invalidArgument(`${field}.format`, `${field}.format must be one of the format ids: ${FORMAT_IDS.join(", ")}`);
  return { name: file.name, contentType: file.contentType, format: file.format, size: file.size, sha256: file.sha256 };
}

/** The most files one CreateRuns call records: a message's MIME parts are at most 1,000. */
const MAX_FILES_PER_CALL = 1000;
/**
 * Statements inserting submissions' runs at once: while they are written, further submissions wait
 * and go together in the next (see WriteBatcher). A second statement starts beside one in flight
 * only once that one has run RUN_INSERT_OVERLAP_AFTER_MS, so the submissions of those milliseconds
 * gather into one statement rather than each starting its own, and fewer statements hold locks on
 * the same pipe, key and organization rows (their foreign keys) at once, which PostgreSQL records
 * in a multixact. A statement slower than that (a commit waiting on the disk) does not hold the
 * next back longer. Against starting at once while fewer than two were in flight: PostgreSQL's CPU
 * per submission about a quarter less, the same tail (bench/README.md).
 */
const RUN_INSERTS_IN_FLIGHT = 2;
const RUN_INSERT_OVERLAP_AFTER_MS = 5;

/** The time from which idempotency records still count, for a request at `now`. */
function idempotencyCutoffs(now: Date): { windowStart: Date; leaseStart: Date } {
  return { windowStart: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS), leaseStart: new Date(now.getTime() - IDEMPOTENCY_LEASE_MS) };
}

function keyInFlight(): ConnectError {
  return serviceError(Code.AlreadyExists, "idempotency_key_in_flight", "a submission with this idempotency key is in flight");
}

/** The run a submission created, or NotFound naming what was missing. */
function createdRun(result: runs.QueuedRunResult): runs.RunRow {
  if (result.outcome !== "created") throw notFound(result.outcome.replace(/_not_found$/, ""));
  return result.run;
}

function unauthenticated(reason: string, message: string) {
  return serviceError(Code.Unauthenticated, reason, message);
}

/**
 * What the REST edge calls to accept a submission. Its reads go through the shared caches, which
 * the management services clear on every change.
 */
export function createTriggerService(deps: ServiceDeps, caches: ServiceCaches, queuedRunsCap: QueuedRunsCap): ServiceImpl<typeof TriggerService> {
  const { db, config } = deps;
  // Submissions without an Idempotency-Key, several to a statement and a commit under load.
  const queuedRuns = new WriteBatcher((newRuns: runs.NewRun[]) => runs.insertQueuedRuns(db, newRuns), {
    maxInFlight: RUN_INSERTS_IN_FLIGHT,
    overlapAfterMs: RUN_INSERT_OVERLAP_AFTER_MS,
    maxBatch: MAX_FILES_PER_CALL,
    mayBeOneItems: (error) => !isDatabaseUnavailable(error),
  });

  return {
    async authenticateKey(request) {
      const keyValue = request.keyValue;
      if (keyValue === "") throw unauthenticated("api_key_missing", "send an API key in the X-Api-Key header");
      // Checked before any query: malformed values and typos cost no database round trip.
      if (!isWellFormedKeyValue(keyValue)) throw unauthenticated("api_key_invalid", "the API key is malformed or mistyped (its checksum does not match)");
      const digest = keyDigestBase64(keyValue);
      const key = await caches.credentials.get(digest, () => findKeyCredentials(db, Buffer.from(digest, "base64")));
      if (key === undefined) throw unauthenticated("api_key_invalid", "the API key is not known; it may have been deleted");
      if (key.state === "deactivated") throw unauthenticated("api_key_deactivated", "the API key is deactivated; reactivate it or use another key");
      const now = deps.now();
      if (isExpired(key.expire_time, now)) throw unauthenticated("api_key_expired", "the API key has expired; create a new key");
      if (isKeyUseDue(key.last_used_time, now)) {
        // Fire-and-forget: a failed write only delays the last-used time; it must never fail the request.
        recordKeyUse(db, key.id, now, LAST_USED_RESOLUTION_MS).catch(() => {});
        // The cached credentials too, or every request of the cached second would write again.
        key.last_used_time = now;
      }
      return {
        organizationId: key.organization_id,
        keyId: key.id,
        permissions: key.permissions,
        plan: key.plan,
        rateLimitPerMinute: rateLimitOf(config.plans, key.plan),
        allowedPipeIds: key.pipe_ids ?? [],
        allowedWorkspaceIds: key.workspace_ids ?? [],
      };
    },

    async resolveTrigger(request) {
      const workspaceId = workspaceIdArgument(request.workspaceId);
      // Junk pipe ids (and organization ids, which come from an authenticated key) cost no query.
      if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      // A UUID in any case names the same pipe; the key's limits hold the database's lower case.
      const pipeId = request.pipeId.toLowerCase();
      // A key limited to other pipes gets what a missing pipe gets, without a query.
      if (request.allowedPipeIds.length > 0 && !request.allowedPipeIds.includes(pipeId)) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      const cacheKey = `${request.organizationId}/${workspaceId ?? ""}/${pipeId}`;
      const resolved = await caches.triggers.get(cacheKey, () => resolveTrigger(db, request.organizationId, workspaceId, pipeId));
      if (resolved === undefined) throw notFound("workspace");
      if (resolved.pipe === undefined) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      if (request.allowedWorkspaceIds.length > 0 && !request.allowedWorkspaceIds.includes(resolved.workspaceId)) {
        throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      }
      return {
        pipeId: resolved.pipe.id,
        workspaceId: resolved.workspaceId,
        pipelineVersion: resolved.pipe.pipelineVersion,
        trigger: resolved.pipe.trigger,
      };
    },

    async getTriggerOrigins(request) {
      const allowedOrigins = isUuid(request.pipeId) ? await findTriggerOrigins(db, request.pipeId) : undefined;
      if (allowedOrigins === undefined) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      return { allowedOrigins };
    },

    async createRun(request) {
      const file = validStoredFile(request.file);
      if (request.pipelineVersion < 1) throw invalidArgument("pipeline_version", "pipeline_version must be at least 1");
      if (request.apiKeyId !== "" && !isUuid(request.apiKeyId)) throw invalidArgument("api_key_id", "api_key_id must be a UUID");
      if (request.idempotencyKey !== "") requireIdempotencyKey(request.idempotencyKey);
      if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe");
      const apiKeyId = request.apiKeyId === "" ? null : request.apiKeyId;
      await queuedRunsCap.check(request.organizationId, 1);
      const now = deps.now();

      // The submission's trace context goes with the run, so the worker's spans join its trace.
      const newRun = {
        organizationId: request.organizationId,
        pipeId: request.pipeId,
        pipelineVersion: request.pipelineVersion,
        apiKeyId,
        file,
        createTime: now,
        traceParent: activeTraceparent(),
        email: request.email === undefined ? null : { sender: request.email.sender, subject: request.email.subject, messageId: request.email.messageId },
      };
      const idempotencyKey = request.idempotencyKey;
      const run =
        idempotencyKey === ""
          ? createdRun(await queuedRuns.add(newRun))
          : await inTransaction(db, async (trx) => {
              const row = createdRun((await runs.insertQueuedRuns(trx, [newRun]))[0]!);
              const completed = await idempotencyKeys.completeIdempotencyKey(trx, {
                organizationId: request.organizationId,
                key: idempotencyKey,
                pipeId: request.pipeId,
                runId: row.id,
                now,
                windowStart: idempotencyCutoffs(now).windowStart,
              });
              // Another submission used the key first: throwing rolls back the file and run rows.
              if (!completed) throw keyInFlight();
              return row;
            });
      queuedRunsCap.added(request.organizationId, 1);
      deps.runsQueued.queued();
      deps.metrics?.runsCreated.inc();
      return { run: runMessage(run) };
    },

    async createRuns(request) {
      if (request.files.length === 0 || request.files.length > MAX_FILES_PER_CALL) {
        throw invalidArgument("files", `files must hold 1 to ${MAX_FILES_PER_CALL} stored files`);
      }
      const files = request.files.map((file, index) => validStoredFile(file, `files[${index}]`));
      if (request.pipelineVersion < 1) throw invalidArgument("pipeline_version", "pipeline_version must be at least 1");
      if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe");
      const now = deps.now();
      const traceParent = activeTraceparent();
      const email = request.email === undefined ? null : { sender: request.email.sender, subject: request.email.subject, messageId: request.email.messageId };
      const message = email === null || email.messageId === "" ? undefined : { pipeId: request.pipeId, sender: email.sender, messageId: email.messageId };
      // One transaction: a failure on any file rolls back the runs before it, so a refused message leaves none.
      const { rows: created, replayed } = await inTransaction(db, async (trx) => {
        // A message taken before (its sender did not get the answer, and sent it again) gets the runs it made.
        if (message !== undefined) {
          await runs.lockEmailMessage(trx, message);
          const earlier = await runs.findRunsOfEmailMessage(trx, message, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS));
          if (earlier.length > 0) return { rows: earlier, replayed: true };
        }
        await queuedRunsCap.check(request.organizationId, files.length);
        const newRuns = files.map((file) => ({
          organizationId: request.organizationId,
          pipeId: request.pipeId,
          pipelineVersion: request.pipelineVersion,
          apiKeyId: null,
          file,
          createTime: now,
          traceParent,
          email,
        }));
        const rows = (await runs.insertQueuedRuns(trx, newRuns)).map(createdRun);
        return { rows, replayed: false };
      });
      if (!replayed) {
        queuedRunsCap.added(request.organizationId, created.length);
        deps.runsQueued.queued();
        deps.metrics?.runsCreated.inc(created.length);
      }
      return { runs: created.map((run) => runMessage(run)), replayed };
    },

    async resolveEmailTrigger(request) {
      const resolved = isUuid(request.pipeId) ? await findEmailTrigger(db, request.pipeId) : undefined;
      if (resolved === undefined) throw notFound("pipe", "no active pipe with an email trigger has this address");
      const { plan, ...trigger } = resolved;
      return { ...trigger, rateLimitPerMinute: rateLimitOf(config.plans, plan) };
    },

    async claimIdempotencyKey(request) {
      requireIdempotencyKey(request.idempotencyKey);
      const valid = isUuid(request.organizationId) && isUuid(request.pipeId);
      if (!valid || !(await pipeExists(db, request.organizationId, request.pipeId))) throw notFound("pipe");
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const now = deps.now();
        const claim = { organizationId: request.organizationId, key: request.idempotencyKey, pipeId: request.pipeId, now, ...idempotencyCutoffs(now) };
        if (await idempotencyKeys.claimIdempotencyKey(db, claim)) return { claimed: true };
        const record = await idempotencyKeys.findIdempotencyKey(db, request.organizationId, request.idempotencyKey);
        if (record === undefined) continue; // released between the two statements: claim again
        if (record.run_id === null) throw keyInFlight();
        return { claimed: false, previousRun: runMessage(await requireRun(db, request.organizationId, record.run_id)) };
      }
      throw keyInFlight();
    },

    async releaseIdempotencyKey(request) {
      requireIdempotencyKey(request.idempotencyKey);
      if (isUuid(request.organizationId)) await idempotencyKeys.releaseIdempotencyKey(db, request.organizationId, request.idempotencyKey);
      return {};
    },
  };
}
