import { ReviewDecision } from "../../gen/docpipe/v1/pipe_pb.js";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import type { Run } from "../../gen/docpipe/v1/run_pb.js";
import type { ListRunsRequest, ResolveReviewRequest, RunService } from "../../gen/docpipe/v1/run_service_pb.js";
import { ancestorsOf, type PipelineGraph, pipelineGraph } from "../runs/pipes/graph.ts";
import { definitionOfNode, kindName } from "../runs/nodes/registry.ts";
import {
  ReviewDataError,
  reviewExpired,
  reviewStepResult,
  type ReviewVerdict,
  timedOutReviewResult,
  revalidatedCorrections,
  typedCorrections,
  type WaitingReview,
} from "../runs/pipes/review-decision.ts";
import { inTransaction } from "../data/db/transaction.ts";
import { decodePipeline, findPipe, findStoredPipeline } from "../data/repositories/pipes.ts";
import { storableJson } from "../data/db/storable.ts";
import type { Pipeline } from "../../gen/docpipe/v1/pipe_pb.js";
import type { Db } from "../data/db/schema.ts";
import { listRunDeliveries, redeliver } from "../data/repositories/callback-deliveries.ts";
import { decideReview, findWaitingReview, listRunSteps, type RunStepRow } from "../data/repositories/run-steps.ts";
import * as runs from "../data/repositories/runs.ts";
import { type Caller, callerKey } from "../platform/auth/caller.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid } from "../platform/ids.ts";
import { listPage } from "./pagination.ts";
import { requireOrganization } from "./organizations.ts";
import { requestDate } from "./timestamps.ts";
import { requireRun, runMessage, STATUSES } from "./run-messages.ts";
import type { QueuedRunsCap } from "./queued-runs-cap.ts";

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
    parentRunId: optionalUuidFilter("parent_run_id", request.parentRunId),
    status: STATUSES.filter(request.status, "status"),
    createTimeAfter: optionalDate("create_time_after", request.createTimeAfter),
    createTimeBefore: optionalDate("create_time_before", request.createTimeBefore),
  };
}

const MAX_COMMENT_LENGTH = 4000;
const MAX_REVIEWER_LENGTH = 200;

/** The decision of a ResolveReview request, checked; without a reviewer named, the caller (a person's email, a token's name) decided. */
function reviewVerdict(request: ResolveReviewRequest, now: Date, caller: Caller | undefined): ReviewVerdict {
  if (request.decision !== ReviewDecision.APPROVE && request.decision !== ReviewDecision.REJECT) {
    throw invalidArgument("decision", "decision must be REVIEW_DECISION_APPROVE or REVIEW_DECISION_REJECT");
  }
  const decision = request.decision === ReviewDecision.APPROVE ? "approve" : "reject";
  if (decision === "reject" && request.comment.trim() === "") throw invalidArgument("comment", "a rejection needs a comment saying why");
  if (decision === "reject" && request.data !== undefined) throw invalidArgument("data", "data is corrected only with an approval");
  if (request.comment.length > MAX_COMMENT_LENGTH) throw invalidArgument("comment", `comment has at most ${MAX_COMMENT_LENGTH} characters`);
  if (request.reviewer.length > MAX_REVIEWER_LENGTH) throw invalidArgument("reviewer", `reviewer has at most ${MAX_REVIEWER_LENGTH} characters`);
  return { decision, reviewer: request.reviewer || (caller?.name ?? ""), comment: request.comment, decideTime: now, corrected: request.data };
}

/** The statuses of a run that has ended: only such a run may be rerun. */
const ENDED: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

/**
 * A run that may be rerun: one that has ended (a run in review or awaiting its parts would have a
 * second live run of the same document), and not a split's part (its parent's merge and callback
 * would not see the rerun: a part's rerun split the part again and sent the parent's receiver a
 * second merged callback).
 */
function requireRerunnable(source: runs.RunRow): void {
  if (!ENDED.has(source.status)) {
    throw serviceError(
      Code.FailedPrecondition,
      "run_not_finished",
      `the run has not ended (${source.status}): rerun it once it has completed, failed or been cancelled (CancelRun ends it)`,
      { status: source.status },
    );
  }
  if (source.parent_run_id !== null) {
    throw serviceError(
      Code.FailedPrecondition,
      "run_is_part",
      `the run is part ${(source.part_index ?? 0) + 1} of run ${source.parent_run_id}, made by its split node: rerun that run`,
      { parent_run_id: source.parent_run_id },
    );
  }
}

/** The node `fromNodeId` of the current pipeline, or InvalidArgument; a rerun cannot start after a split. */
interface RerunStart {
  graph: PipelineGraph;
  /** The position of the node the rerun starts at. */
  from: number;
  fromNodeId: string;
}

function rerunStart(pipeline: Pipeline, fromNodeId: string): RerunStart {
  const graph = pipelineGraph(pipeline);
  const from = graph.positions.get(fromNodeId);
  if (from === undefined) throw invalidArgument("from_node_id", `the pipe's current pipeline has no node "${fromNodeId.slice(0, 100)}"`);
  // A split's output passes the run on to its parts' runs, which a rerun does not copy.
  const split = [...ancestorsOf(graph, from)].map((position) => pipeline.nodes[position]!).find((node) => definitionOfNode(node)?.splits === true);
  if (split !== undefined) {
    throw invalidArgument(
      "from_node_id",
      `a rerun cannot start after the split node "${split.id}": its parts are runs of their own; rerun from the split or before it`,
    );
  }
  return { graph, from, fromNodeId };
}

/**
 * The steps a rerun from `fromNodeId` reuses: those of the nodes it can be reached from in the
 * current pipeline that completed in the earlier run, matched by node id and type, at their
 * positions in the current pipeline, with their times and the run that executed them. The node must
 * be one the earlier run reached (it has a step there): from a node it never reached (a branch a
 * route did not take) the copied route output would take the run down the branch it took before,
 * calling that branch's receiver again.
 */
function reusedSteps(pipeline: Pipeline, start: RerunStart, source: runs.RunRow, earlier: RunStepRow[]): runs.ReusedStep[] {
  const { graph, from, fromNodeId } = start;
  if (!earlier.some((step) => step.node_id === fromNodeId)) {
    throw serviceError(
      Code.FailedPrecondition,
      "node_not_reached",
      `the run never reached node "${fromNodeId.slice(0, 100)}" (a branch its route did not take, or a node added since): rerun from a node it reached, or from the start`,
      { field: "from_node_id" },
    );
  }
  const completed = new Map(earlier.filter((step) => step.status === "completed").map((step) => [step.node_id, step]));
  return [...ancestorsOf(graph, from)].flatMap((position) => {
    const node = pipeline.nodes[position]!;
    const step = completed.get(node.id);
    // A node of the same id but another kind since (an edit) is done again: its output would not be its kind's.
    if (step === undefined || node.kind.case === undefined || step.node_type !== kindName(node.kind.case)) return [];
    return [
      {
        position,
        nodeId: step.node_id,
        nodeType: step.node_type,
        output: storableJson(step.output),
        startTime: step.start_time,
        endTime: step.end_time,
        copiedFromRunId: step.copied_from_run_id ?? source.id,
      },
    ];
  });
}

export function createRunService(deps: ServiceDeps, queuedRunsCap: QueuedRunsCap): ServiceImpl<typeof RunService> {
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
      // Read in the same transaction: the answer shows the delivery as scheduled, before a sender takes it.
      const outcome = isUuid(deliveryId)
        ? await inTransaction(db, async (trx) => {
            const result = await redeliver(trx, organizationId, runId, deliveryId);
            return result === "scheduled" ? runWithSteps(trx, organizationId, runId) : result;
          })
        : "not_found";
      if (outcome === "not_found") throw notFound("callback_delivery");
      if (outcome === "in_progress") {
        throw serviceError(
          Code.FailedPrecondition,
          "callback_delivery_in_progress",
          "an attempt of this callback delivery is in flight; try again when it ends",
        );
      }
      if (outcome === "cancelled")
        throw serviceError(Code.FailedPrecondition, "callback_delivery_cancelled", "the run was cancelled: its callback is not sent");
      return { run: outcome };
    },

    async rerunRun(request) {
      const { organizationId } = request;
      const source = await requireRun(db, organizationId, request.runId);
      await queuedRunsCap.check(organizationId, 1);
      const run = await inTransaction(db, async (trx) => {
        const pipe = await findPipe(trx, organizationId, source.pipe_id);
        if (pipe === undefined) throw notFound("pipe");
        // What the request names is checked first (InvalidArgument), then the run's state (FailedPrecondition).
        const start = request.fromNodeId === "" ? undefined : rerunStart(pipe.pipeline, request.fromNodeId);
        requireRerunnable(source);
        const reused = start === undefined ? [] : reusedSteps(pipe.pipeline, start, source, await listRunSteps(trx, source.id));
        const id = await runs.insertRerun(trx, source, reused, deps.now());
        if (id === undefined) throw notFound("pipe");
        // Read in the transaction: the answer is the run as queued, before any worker takes it.
        return runWithSteps(trx, organizationId, id);
      });
      queuedRunsCap.added(organizationId, 1);
      deps.runsQueued.queued();
      return { run };
    },

    async resolveReview(request, context) {
      const { organizationId, runId } = request;
      const verdict = reviewVerdict(request, deps.now(), context.values.get(callerKey));
      const row = await requireRun(db, organizationId, runId);
      const waiting = await findWaitingReview(db, organizationId, runId);
      const notInReview = () =>
        serviceError(Code.FailedPrecondition, "run_not_in_review", `the run is not waiting for a review (${row.status})`, { status: row.status });
      if (waiting === undefined) throw notInReview();
      // Past its timeout the review has its configured decision, whether or not the worker's sweep took it yet.
      const shown = waiting.output as WaitingReview;
      if (reviewExpired(shown, deps.now())) {
        if (await decideReview(db, runId, waiting.position, timedOutReviewResult(shown, deps.now()))) deps.runsQueued.queued();
        throw serviceError(Code.FailedPrecondition, "review_expired", `the review timed out at ${shown.expireTime}; its timeout decision was taken`);
      }
      // What a reviewer typed for an extract field takes the field's type, from the pipeline the run runs.
      const stored = verdict.corrected === undefined ? undefined : await findStoredPipeline(db, row.pipe_id, row.pipeline_version);
      let result: ReturnType<typeof reviewStepResult>;
      try {
        const shownData = (waiting.output as { data?: Record<string, unknown> }).data ?? {};
        if (stored !== undefined) {
          const pipeline = decodePipeline(stored.pipeline);
          verdict.corrected = await revalidatedCorrections(pipeline, shownData, typedCorrections(pipeline, verdict.corrected!), {
            organizationId,
            signal: context.signal,
          });
        }
        result = reviewStepResult(shownData, verdict);
      } catch (error) {
        if (error instanceof ReviewDataError) throw invalidArgument(error.field, error.message);
        throw error;
      }
      // Read in the decision's transaction: the answer is the run as queued, before any worker takes it.
      const decided = await inTransaction(db, async (trx) =>
        (await decideReview(trx, runId, waiting.position, result)) ? runWithSteps(trx, organizationId, runId) : undefined,
      );
      // Another decision made at the same moment won: the run is no longer in review.
      if (decided === undefined) throw notInReview();
      deps.runsQueued.queued();
      return { run: decided };
    },
  };
}
