import { sql } from "kysely";
import { inTransaction } from "../db/transaction.ts";
import type { Db, RunStatus } from "../db/schema.ts";
import { storableJson } from "../db/storable.ts";
import { notifyRunsQueued } from "../db/run-notifications.ts";
import { newId } from "../../platform/ids.ts";
import type { NewDelivery } from "./callback-deliveries.ts";
import { type EndedStep, recordEndedSteps, type StepNode } from "./run-steps.ts";
import type { Lease } from "./held-run.ts";
import type { ClaimedRun } from "./run-leases.ts";
import type { NewFile } from "./runs.ts";

/** One part of a split document, to become a child run. */
export interface NewPart {
  runId: string;
  file: NewFile;
  index: number;
  label: string;
  /** What the child's copy of the split step shows (its part's pages and label). */
  stepOutput: unknown;
}

/** Rolls the transaction back when the parent is no longer ours at the last statement. */
class NotHeld extends Error {}

/**
 * Makes a queued child run per part, each with its own file row and the split step already completed
 * at `split`'s position, and moves the parent to 'awaiting_children' with its steps written (the
 * split's among them), all in one transaction: a worker that dies before the commit leaves nothing,
 * one that dies after leaves everything. The parent's own update comes last and locks its row, so a
 * cancellation meanwhile rolls everything back. Returns false when the parent is no longer ours
 * (nothing is written). Workers are told of the queued children once they are committed.
 */
export async function insertChildRuns(
  db: Db,
  lease: Lease,
  parent: ClaimedRun,
  steps: readonly EndedStep[],
  deliveries: readonly NewDelivery[],
  split: StepNode,
  parts: readonly NewPart[],
): Promise<boolean> {
  let inserted: number;
  try {
    inserted = await inTransaction(db, async (trx) => {
      if (!(await recordEndedSteps(trx, lease, steps, deliveries))) throw new NotHeld();
      const rows = parts.map((part) => ({ part, fileId: newId(), runId: part.runId }));
      if (rows.length > 0) {
        await trx
          .insertInto("files")
          .values(
            rows.map(({ part, fileId }) => ({
              id: fileId,
              organization_id: parent.organization_id,
              name: part.file.name,
              content_type: part.file.contentType,
              format: part.file.format,
              size: part.file.size,
              sha256: part.file.sha256,
              create_time: sql<Date>`now()`,
            })),
          )
          .execute();
        await trx
          .insertInto("runs")
          .values(
            rows.map(({ part, fileId, runId }) => ({
              id: runId,
              organization_id: parent.organization_id,
              workspace_id: parent.workspace_id,
              pipe_id: parent.pipe_id,
              pipeline_version: parent.pipeline_version,
              file_id: fileId,
              api_key_id: parent.api_key_id,
              status: "queued" as const,
              create_time: sql<Date>`now()`,
              trace_parent: parent.trace_parent,
              parent_run_id: parent.id,
              part_index: part.index,
              part_label: part.label,
              start_node_id: split.nodeId,
            })),
          )
          .execute();
        await trx
          .insertInto("run_steps")
          .values(
            rows.map(({ part, runId }) => ({
              run_id: runId,
              position: split.position,
              node_id: split.nodeId,
              node_type: split.nodeType,
              status: "completed" as const,
              start_time: sql<Date>`now()`,
              end_time: sql<Date>`now()`,
              output: storableJson(part.stepOutput),
            })),
          )
          .execute();
      }
      const waiting = await trx
        .updateTable("runs")
        .set({ status: rows.length > 0 ? "awaiting_children" : "queued", lease_owner: null, lease_expire_time: null, attempts: 0 })
        .where("id", "=", lease.runId)
        .where("status", "=", "running")
        .where("lease_owner", "=", lease.owner)
        .executeTakeFirst();
      if (waiting.numUpdatedRows === 0n) throw new NotHeld();
      return rows.length;
    });
  } catch (error) {
    if (error instanceof NotHeld) return false;
    throw error;
  }
  // A notification that fails only leaves the children to the next poll.
  if (inserted > 0) await notifyRunsQueued(db).catch(() => {});
  return true;
}

/** A child run as a merge node sees it: its part, how it ended, its file and its steps' outputs. */
export interface ChildRun {
  id: string;
  part_index: number;
  part_label: string;
  status: RunStatus;
  error: string;
  file_name: string;
  file_format: string;
  /** bigint arrives from pg as a string. */
  file_size: string;
  file_sha256: string;
  steps: { node_id: string; node_type: string; status: string; output: unknown }[];
}

/** The child runs of a run, in part order, each with its steps in pipeline order. */
export async function listChildRuns(db: Db, parentRunId: string): Promise<ChildRun[]> {
  const { rows } = await sql<ChildRun>`
    select r.id, r.part_index, r.part_label, r.status, r.error,
      f.name as file_name, f.format as file_format, f.size as file_size, f.sha256 as file_sha256,
      coalesce((
        select jsonb_agg(jsonb_build_object('node_id', s.node_id, 'node_type', s.node_type, 'status', s.status, 'output', s.output) order by s.position)
        from run_steps s where s.run_id = r.id
      ), '[]'::jsonb) as steps
    from runs r join files f on f.id = r.file_id
    where r.parent_run_id = ${parentRunId}
    order by r.part_index`.execute(db);
  return rows;
}
