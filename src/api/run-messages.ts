import { create, fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate, type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
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
import { NODE_DEFINITIONS, type NodeTypeName } from "../runs/nodes/registry.ts";
import type { Db, DeliveryStatus, RunStatus as RunStatusColumn, StepStatus as StepStatusColumn } from "../data/db/schema.ts";
import type { DeliveryWithAttempts } from "../data/repositories/callback-deliveries.ts";
import type { RunStepRow } from "../data/repositories/run-steps.ts";
import * as runs from "../data/repositories/runs.ts";
import { EnumColumn } from "./enum-columns.ts";
import { notFound } from "./errors.ts";
import { isUuid } from "../platform/ids.ts";
import { optionalTimestamp } from "./timestamps.ts";

// A run as the services show it: its row, steps and deliveries as messages of the contract. RunService
// and TriggerService both answer with runs, so the mapping lives here rather than in either service.

export const STATUSES = new EnumColumn<RunStatusColumn, RunStatus>("a run status", {
  queued: RunStatus.QUEUED,
  running: RunStatus.RUNNING,
  completed: RunStatus.COMPLETED,
  failed: RunStatus.FAILED,
  cancelled: RunStatus.CANCELLED,
  review: RunStatus.REVIEW,
  awaiting_children: RunStatus.AWAITING_CHILDREN,
});

// Every node kind's recorded name and its NodeType, from the registry.
const NODE_TYPES = new EnumColumn<NodeTypeName, NodeType>(
  "a node type",
  Object.fromEntries(Object.values(NODE_DEFINITIONS).map((definition) => [definition.name, definition.nodeType])) as Record<NodeTypeName, NodeType>,
);

const STEP_STATUSES = new EnumColumn<StepStatusColumn, StepStatus>("a step status", {
  running: StepStatus.RUNNING,
  completed: StepStatus.COMPLETED,
  failed: StepStatus.FAILED,
  waiting: StepStatus.WAITING,
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

/** A step's output as RunStep carries it (jsonb arrives parsed): an object as `output`, a Struct; any other JSON value as `outputValue`. */
function outputFields(output: unknown): { output?: JsonObject; outputValue?: Value } {
  if (output === null) return {};
  if (typeof output === "object" && !Array.isArray(output)) return { output: output as JsonObject };
  return { outputValue: fromJson(ValueSchema, output as JsonValue) };
}

function runStepMessage(step: RunStepRow): RunStep {
  return create(RunStepSchema, {
    nodeId: step.node_id,
    // A type this release does not know (written by a newer one) shows as UNSPECIFIED.
    nodeType: NODE_TYPES.proto(step.node_type as NodeTypeName) ?? NodeType.UNSPECIFIED,
    status: STEP_STATUSES.proto(step.status),
    startTime: timestampFromDate(step.start_time),
    endTime: optionalTimestamp(step.end_time),
    // jsonb arrives parsed. A Struct holds an object; a transform's output may be any JSON value.
    ...outputFields(step.output),
    error: step.error,
    copiedFromRunId: step.copied_from_run_id ?? "",
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
    rerunOfRunId: row.rerun_of ?? "",
    parentRunId: row.parent_run_id ?? "",
    partIndex: row.part_index ?? 0,
    partLabel: row.part_label ?? "",
  });
}

/** The run row, or NotFound (run_not_found) for a missing id, a malformed one, or another organization's run. */
export async function requireRun(db: Db, organizationId: string, runId: string): Promise<runs.RunRow> {
  const row = isUuid(organizationId) && isUuid(runId) ? await runs.findRun(db, organizationId, runId) : undefined;
  if (row === undefined) throw notFound("run");
  return row;
}
