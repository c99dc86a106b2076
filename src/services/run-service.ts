import { create, type JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import {
  type CallbackDelivery,
  CallbackDeliverySchema,
  CallbackDeliveryStatus,
  NodeType,
  type Run,
  RunSchema,
  RunStatus,
  type RunStep,
  RunStepSchema,
  StepStatus,
} from "../../gen/docpipe/v1/run_pb.js";
import type { ListRunsRequest, RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import type { Db, DeliveryStatus, RunStatus as RunStatusColumn, StepStatus as StepStatusColumn } from "../db/schema.ts";
import { type DeliveryWithAttempts, listRunDeliveries, redeliver } from "../repositories/callback-deliveries.ts";
import { listRunSteps, type RunStepRow } from "../repositories/run-steps.ts";
import * as runs from "../repositories/runs.ts";
import type { ServiceDeps } from "./deps.ts";
import { EnumColumn } from "./enum-columns.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid } from "../ids.ts";
import { listPage } from "./pagination.ts";
import { requireOrganization } from "./organizations.ts";
import { optionalTimestamp, requestDate } from "./timestamps.ts";

const STATUSES = new EnumColumn<RunStatusColumn, RunStatus>("a run status", {
  queued: RunStatus.QUEUED,
  running: RunStatus.RUNNING,
  completed: RunStatus.COMPLETED,
  failed: RunStatus.FAILED,
  cancelled: RunStatus.CANCELLED,
});

/** The node types a step records (run_steps.node_type). */
type NodeTypeColumn = "http_trigger" | "parse" | "callback" | "extract" | "classify" | "transform" | "validate" | "http_request" | "email" | "email_trigger";

const NODE_TYPES = new EnumColumn<NodeTypeColumn, NodeType>("a node type", {
  http_trigger: NodeType.HTTP_TRIGGER,
  parse: NodeType.PARSE,
  callback: NodeType.CALLBACK,
  extract: NodeType.EXTRACT,
  classify: NodeType.CLASSIFY,
  transform: NodeType.TRANSFORM,
  validate: NodeType.VALIDATE,
  http_request: NodeType.HTTP_REQUEST,
  email: NodeType.EMAIL,
  email_trigger: NodeType.EMAIL_TRIGGER,
});

const STEP_STATUSES = new EnumColumn<StepStatusColumn, StepStatus>("a step status", {
  running: StepStatus.RUNNING,
  completed: StepStatus.COMPLETED,
  failed: StepStatus.FAILED,
});

const DELIVERY_STATUSES = new EnumColumn<DeliveryStatus, CallbackDeliveryStatus>("a callback delivery status", {
  pending: CallbackDeliveryStatus.PENDING,
  delivered: CallbackDeliveryStatus.DELIVERED,
  failed: CallbackDeliveryStatus.FAILED,
  cancelled: CallbackDeliveryStatus.CANCELLED,
});

/** A delivery as RunService shows it: the receiver's host only, as a URL's path may carry a token. */
function deliveryMessage(delivery: DeliveryWithAttempts): CallbackDelivery {
  return create(CallbackDeliverySchema, {
    id: delivery.id,
    nodeId: delivery.node_id,
    status: DELIVERY_STATUSES.proto(delivery.status),
    host: new URL(delivery.url).host,
    attempts: delivery.attempts_made.map((attempt) => ({
      number: attempt.number,
      startTime: timestampFromDate(attempt.start_time),
      durationMs: attempt.duration_ms ?? undefined,
      httpStatus: attempt.http_status ?? 0,
      error: attempt.error,
      nextAttemptTime: optionalTimestamp(attempt.next_attempt_time),
    })),
    nextAttemptTime: optionalTimestamp(delivery.next_attempt_time),
    createTime: timestampFromDate(delivery.create_time),
  });
}

function runStepMessage(step: RunStepRow): RunStep {
  return create(RunStepSchema, {
    nodeId: step.node_id,
    // A type this release does not know (written by a newer one) shows as UNSPECIFIED.
    nodeType: NODE_TYPES.proto(step.node_type as NodeTypeColumn) ?? NodeType.UNSPECIFIED,
    status: STEP_STATUSES.proto(step.status),
    startTime: timestampFromDate(step.start_time),
    endTime: optionalTimestamp(step.end_time),
    // jsonb arrives parsed; the worker stores objects, which is what a Struct holds.
    output: step.output === null ? undefined : (step.output as JsonObject),
    error: step.error,
  });
}

export function runMessage(row: runs.RunRow, steps: RunStepRow[] = [], deliveries: DeliveryWithAttempts[] = []): Run {
  return create(RunSchema, {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    pipeId: row.pipe_id,
    pipelineVersion: row.pipeline_version,
    status: STATUSES.proto(row.status),
    file: {
      id: row.file_id,
      name: row.file_name,
      contentType: row.file_content_type,
      format: row.file_format,
      size: BigInt(row.file_size),
      sha256: row.file_sha256,
    },
    steps: steps.map(runStepMessage),
    callbackDeliveries: deliveries.map(deliveryMessage),
    error: row.error,
    createTime: timestampFromDate(row.create_time),
    startTime: optionalTimestamp(row.start_time),
    endTime: optionalTimestamp(row.end_time),
  });
}

/** The run row, or NotFound (run_not_found) for a missing id, a malformed one, or another organization's run. */
export async function requireRun(db: Db, organizationId: string, runId: string): Promise<runs.RunRow> {
  const row = isUuid(organizationId) && isUuid(runId) ? await runs.findRun(db, organizationId, runId) : undefined;
  if (row === undefined) throw notFound("run");
  return row;
}

async function runWithSteps(db: Db, organizationId: string, runId: string): Promise<Run> {
  const row = await requireRun(db, organizationId, runId);
  const [steps, deliveries] = await Promise.all([listRunSteps(db, row.id), listRunDeliveries(db, row.id)]);
  return runMessage(row, steps, deliveries);
}

function optionalUuidFilter(field: string, value: string): string | undefined {
  if (value === "") return undefined;
  if (!isUuid(value)) throw invalidArgument(field, `${field} must be a UUID`);
  return value;
}

function optionalDate(field: string, timestamp: Timestamp | undefined): Date | undefined {
  return timestamp === undefined ? undefined : requestDate(field, timestamp);
}

/** The repository filter of a ListRuns request, checked. */
function runFilter(request: ListRunsRequest): runs.RunFilter {
  return {
    organizationId: request.organizationId,
    workspaceId: optionalUuidFilter("workspace_id", request.workspaceId),
    pipeId: optionalUuidFilter("pipe_id", request.pipeId),
    status: STATUSES.filter(request.status, "status"),
    createTimeAfter: optionalDate("create_time_after", request.createTimeAfter),
    createTimeBefore: optionalDate("create_time_before", request.createTimeBefore),
  };
}

export function createRunService(deps: ServiceDeps): ServiceImpl<typeof RunService> {
  const { db } = deps;

  return {
    async getRun(request) {
      return { run: await runWithSteps(db, request.organizationId, request.runId) };
    },

    async listRuns(request) {
      const filter = runFilter(request);
      // The token is bound to the whole filter (dates serialize as ISO strings), so it cannot be replayed on another query.
      const page = await listPage(
        deps.pageTokens,
        request,
        filter,
        (afterId, limit) => runs.listRuns(db, filter, afterId, limit),
        () => requireOrganization(db, request.organizationId),
      );
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
      deps.metrics?.runsCancelled.inc();
      return { run: await runWithSteps(db, organizationId, runId) };
    },

    async redeliverCallback(request) {
      const { organizationId, runId, deliveryId } = request;
      await requireRun(db, organizationId, runId);
      const result = isUuid(deliveryId) ? await redeliver(db, organizationId, runId, deliveryId) : "not_found";
      if (result === "not_found") throw notFound("callback_delivery");
      if (result === "in_progress") {
        throw serviceError(
          Code.FailedPrecondition,
          "callback_delivery_in_progress",
          "an attempt of this callback delivery is in flight; try again when it ends",
        );
      }
      if (result === "cancelled") throw serviceError(Code.FailedPrecondition, "callback_delivery_cancelled", "the run was cancelled: its callback is not sent");
      return { run: await runWithSteps(db, organizationId, runId) };
    },
  };
}
