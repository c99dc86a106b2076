import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { type Run, RunSchema, RunStatus, type RunStep, RunStepSchema, StepStatus } from "../../gen/docpipe/v1/run_pb.js";
import type { CreateRunRequest, ListRunsRequest, RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import type { Database, RunStatus as RunStatusColumn, StepStatus as StepStatusColumn } from "../db/schema.ts";
import { requireOrganization } from "../repositories/organizations.ts";
import { pipeExists } from "../repositories/pipes.ts";
import * as runs from "../repositories/runs.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid } from "./ids.ts";
import { pageSize } from "./pagination.ts";
import { optionalTimestamp } from "./timestamps.ts";

/** How long a used Idempotency-Key replays its first submission (DECISIONS.md). */
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
const SHA256_HEX = /^[0-9a-f]{64}$/;

const STATUS_TO_PROTO: Record<RunStatusColumn, RunStatus> = {
  queued: RunStatus.QUEUED,
  running: RunStatus.RUNNING,
  completed: RunStatus.COMPLETED,
  failed: RunStatus.FAILED,
  cancelled: RunStatus.CANCELLED,
};

const STEP_STATUS_TO_PROTO: Record<StepStatusColumn, StepStatus> = {
  running: StepStatus.RUNNING,
  completed: StepStatus.COMPLETED,
  failed: StepStatus.FAILED,
};

/** The column value of a status filter; undefined for "any". */
export function runStatusColumn(status: RunStatus): RunStatusColumn | undefined {
  if (status === RunStatus.UNSPECIFIED) return undefined;
  const column = (Object.keys(STATUS_TO_PROTO) as RunStatusColumn[]).find((name) => STATUS_TO_PROTO[name] === status);
  if (column === undefined) throw invalidArgument("status", `status ${status} is not a run status`);
  return column;
}

/** An Idempotency-Key header value we accept: 1..255 printable ASCII characters. */
export function isValidIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY.test(key);
}

function requireIdempotencyKey(key: string): void {
  if (!isValidIdempotencyKey(key)) {
    throw invalidArgument("idempotency_key", "idempotency_key must be 1 to 255 printable ASCII characters", "idempotency_key_invalid");
  }
}

/** The stored file a CreateRun request describes, checked. */
export function validStoredFile(request: CreateRunRequest): runs.NewFile {
  const file = request.file;
  if (file === undefined) throw invalidArgument("file", "file is required");
  if (!SHA256_HEX.test(file.sha256)) throw invalidArgument("file.sha256", "file.sha256 must be 64 lowercase hexadecimal characters");
  if (file.size < 1n) throw invalidArgument("file.size", "file.size must be at least 1 byte");
  if (file.format === "") throw invalidArgument("file.format", "file.format must not be empty");
  return { name: file.name, contentType: file.contentType, format: file.format, size: file.size, sha256: file.sha256 };
}

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

function runStepMessage(step: runs.RunStepRow): RunStep {
  return create(RunStepSchema, {
    nodeId: step.node_id,
    nodeType: step.node_type,
    status: STEP_STATUS_TO_PROTO[step.status],
    startTime: timestampFromDate(step.start_time),
    endTime: optionalTimestamp(step.end_time),
    // jsonb arrives parsed; the worker stores objects, which is what a Struct holds.
    output: step.output === null ? undefined : (step.output as JsonObject),
    error: step.error,
  });
}

export function runMessage(row: runs.RunRow, steps: runs.RunStepRow[] = []): Run {
  return create(RunSchema, {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    pipeId: row.pipe_id,
    pipelineVersion: row.pipeline_version,
    status: STATUS_TO_PROTO[row.status],
    file: {
      id: row.file_id,
      name: row.file_name,
      contentType: row.file_content_type,
      format: row.file_format,
      size: BigInt(row.file_size),
      sha256: row.file_sha256,
    },
    steps: steps.map(runStepMessage),
    error: row.error,
    createTime: timestampFromDate(row.create_time),
    startTime: optionalTimestamp(row.start_time),
    endTime: optionalTimestamp(row.end_time),
  });
}

/** The run row, or NotFound (run_not_found) for a missing id, a malformed one, or another organization's run. */
async function requireRun(db: Kysely<Database>, organizationId: string, runId: string): Promise<runs.RunRow> {
  const row = isUuid(organizationId) && isUuid(runId) ? await runs.findRun(db, organizationId, runId) : undefined;
  if (row === undefined) throw notFound("run");
  return row;
}

async function runWithSteps(db: Kysely<Database>, organizationId: string, runId: string): Promise<Run> {
  const row = await requireRun(db, organizationId, runId);
  return runMessage(row, await runs.listRunSteps(db, row.id));
}

function optionalUuidFilter(field: string, value: string): string | undefined {
  if (value === "") return undefined;
  if (!isUuid(value)) throw invalidArgument(field, `${field} must be a UUID`);
  return value;
}

function optionalDate(timestamp: Timestamp | undefined): Date | undefined {
  return timestamp === undefined ? undefined : timestampDate(timestamp);
}

/** The repository filter of a ListRuns request, checked. */
export function runFilter(request: ListRunsRequest): runs.RunFilter {
  return {
    organizationId: request.organizationId,
    workspaceId: optionalUuidFilter("workspace_id", request.workspaceId),
    pipeId: optionalUuidFilter("pipe_id", request.pipeId),
    status: runStatusColumn(request.status),
    createTimeAfter: optionalDate(request.createTimeAfter),
    createTimeBefore: optionalDate(request.createTimeBefore),
  };
}

export function createRunService(deps: ServiceDeps): ServiceImpl<typeof RunService> {
  const { db } = deps;

  return {
    async createRun(request) {
      const file = validStoredFile(request);
      if (request.pipelineVersion < 1) throw invalidArgument("pipeline_version", "pipeline_version must be at least 1");
      if (request.apiKeyId !== "" && !isUuid(request.apiKeyId)) throw invalidArgument("api_key_id", "api_key_id must be a UUID");
      if (request.idempotencyKey !== "") requireIdempotencyKey(request.idempotencyKey);
      if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe");
      const apiKeyId = request.apiKeyId === "" ? null : request.apiKeyId;
      const now = deps.now();

      const newRun = { organizationId: request.organizationId, pipeId: request.pipeId, pipelineVersion: request.pipelineVersion, apiKeyId, file, createTime: now };
      const idempotencyKey = request.idempotencyKey;
      const run = idempotencyKey === ""
        ? createdRun(await runs.insertQueuedRun(db, newRun))
        : await db.transaction().execute(async (trx) => {
            const row = createdRun(await runs.insertQueuedRun(trx, newRun));
            const completed = await runs.completeIdempotencyKey(trx, {
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
      deps.runsQueued.queued();
      return { run: runMessage(run) };
    },

    async getRun(request) {
      return { run: await runWithSteps(db, request.organizationId, request.runId) };
    },

    async listRuns(request) {
      const size = pageSize(request.pageSize);
      const filter = runFilter(request);
      await requireOrganization(db, request.organizationId);
      // The token is bound to the whole filter (dates serialize as ISO strings), so it cannot be replayed on another query.
      const after = deps.pageTokens.after(request.pageToken, filter);
      const page = deps.pageTokens.page(await runs.listRuns(db, filter, after, size + 1), size, filter);
      return { runs: page.items.map((row) => runMessage(row)), nextPageToken: page.nextPageToken };
    },

    async cancelRun(request) {
      const { organizationId, runId } = request;
      const cancelled = isUuid(organizationId) && isUuid(runId) && (await runs.cancelUnfinishedRun(db, organizationId, runId, deps.now()));
      if (!cancelled) {
        // Not cancelled: either there is no such run (NotFound) or it has already finished.
        const row = await requireRun(db, organizationId, runId);
        throw serviceError(Code.FailedPrecondition, "run_already_finished", `the run has already finished (${row.status})`, { status: row.status });
      }
      return { run: await runWithSteps(db, organizationId, runId) };
    },

    async claimIdempotencyKey(request) {
      requireIdempotencyKey(request.idempotencyKey);
      const valid = isUuid(request.organizationId) && isUuid(request.pipeId);
      if (!valid || !(await pipeExists(db, request.organizationId, request.pipeId))) throw notFound("pipe");
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const now = deps.now();
        const claim = { organizationId: request.organizationId, key: request.idempotencyKey, pipeId: request.pipeId, now, ...idempotencyCutoffs(now) };
        if (await runs.claimIdempotencyKey(db, claim)) return { claimed: true };
        const record = await runs.findIdempotencyKey(db, request.organizationId, request.idempotencyKey);
        if (record === undefined) continue; // released between the two statements: claim again
        if (record.run_id === null) throw keyInFlight();
        return { claimed: false, previousRun: runMessage(await requireRun(db, request.organizationId, record.run_id)) };
      }
      throw keyInFlight();
    },

    async releaseIdempotencyKey(request) {
      requireIdempotencyKey(request.idempotencyKey);
      if (isUuid(request.organizationId)) await runs.releaseIdempotencyKey(db, request.organizationId, request.idempotencyKey);
      return {};
    },
  };
}
