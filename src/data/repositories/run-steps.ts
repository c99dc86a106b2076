import { type RawBuilder, type Selectable, sql } from "kysely";
import type { Db, RunStepTable } from "../db/schema.ts";
import { prepared } from "../db/connection.ts";
import { storableJson } from "../db/storable.ts";
import { deliveriesWrite, type NewDelivery } from "./callback-deliveries.ts";
import { held, type Lease } from "./held-run.ts";

export type RunStepRow = Selectable<RunStepTable>;

/** The steps of a run, in pipeline order. */
export async function listRunSteps(db: Db, runId: string): Promise<RunStepRow[]> {
  return db.selectFrom("run_steps").selectAll().where("run_id", "=", runId).orderBy("position").execute();
}

/** The steps a run has recorded, by position: a resumed run skips the completed ones. */
export async function recordedSteps(db: Db, runId: string): Promise<Map<number, RunStepRow>> {
  return new Map((await listRunSteps(db, runId)).map((row) => [row.position, row]));
}

export interface StepNode {
  position: number;
  nodeId: string;
  nodeType: string;
}

/** How a step ended: its output (completed), its error (failed), or what it shows while it waits for a review. */
export type StepResult = { output: unknown } | { error: string } | { waiting: unknown };

/** A step that has ended (or waits for a review), not yet written. */
export interface EndedStep {
  node: StepNode;
  result: StepResult;
}

function stepValues(result: StepResult) {
  if ("error" in result) return { status: "failed" as const, error: result.error };
  if ("waiting" in result) return { status: "waiting" as const, output: storableJson(result.waiting) };
  return { status: "completed" as const, output: storableJson(result.output) };
}

/** One step to write: running (no result yet), or ended (a waiting step has no end time until it is decided). */
interface StepWrite {
  node: StepNode;
  result: StepResult | undefined;
}

/**
 * The statement that writes steps (each replacing what a previous attempt left at its position)
 * while the run is ours. The rows go as one array per column, so the statement's text is the same
 * for any number of steps and it is prepared once (see prepared), not parsed and planned per run.
 */
function upsertSteps(lease: Lease, steps: readonly StepWrite[], guard: RawBuilder<unknown> = held(lease)) {
  const positions: number[] = [];
  const nodeIds: string[] = [];
  const nodeTypes: string[] = [];
  const statuses: string[] = [];
  const ended: boolean[] = [];
  const outputs: (string | null)[] = [];
  const errors: string[] = [];
  for (const { node, result } of steps) {
    const values: { status: string; output?: string; error?: string } = result === undefined ? { status: "running" } : stepValues(result);
    positions.push(node.position);
    nodeIds.push(node.nodeId);
    nodeTypes.push(node.nodeType);
    statuses.push(values.status);
    ended.push(values.status !== "running" && values.status !== "waiting");
    outputs.push(values.output ?? null);
    errors.push(values.error ?? "");
  }
  return sql<Record<string, unknown>>`
    insert into run_steps (run_id, position, node_id, node_type, status, start_time, end_time, output, error)
    select ${lease.runId}::uuid, step.position, step.node_id, step.node_type, step.status, now(), case when step.ended then now() end, step.output, step.error
    from unnest(${positions}::integer[], ${nodeIds}::text[], ${nodeTypes}::text[], ${statuses}::text[], ${ended}::boolean[], ${outputs}::jsonb[], ${errors}::text[])
      as step (position, node_id, node_type, status, ended, output, error)
    where ${guard}
    on conflict (run_id, position) do update set
      status = excluded.status, start_time = excluded.start_time, end_time = excluded.end_time, output = excluded.output, error = excluded.error`;
}

/**
 * Writes steps (at least one), and the callback deliveries queued with them, in one statement:
 * a step row never names a delivery that was not written. False when the run is no longer ours.
 * With deliveries, the statement first takes the run's row (for share), so a cancel that committed
 * while it waited for the row leaves neither written: checked on the statement's snapshot only,
 * the delivery was written, never became due, and kept retention from removing the run.
 */
async function writeSteps(db: Db, lease: Lease, toWrite: readonly StepWrite[], deliveries: readonly NewDelivery[]): Promise<boolean> {
  const statement =
    deliveries.length === 0
      ? sql`${prepared("write_steps")} ${upsertSteps(lease, toWrite)} returning 1`
      : sql`${prepared("write_steps_deliveries")} with held_run as (
          select id from runs where id = ${lease.runId} and status = 'running' and lease_owner = ${lease.owner} for share
        ), queued_deliveries as ${deliveriesWrite(lease, deliveries, "held_run")}
        ${upsertSteps(lease, toWrite, sql`exists (select 1 from held_run)`)} returning 1`;
  const { rows: written } = await statement.execute(db);
  return written.length > 0;
}

/**
 * The statement that writes ended steps not yet written, for a common table expression of the
 * statement that ends the run (src/data/repositories/run-leases.ts): the run and its last steps in one write.
 */
export function endedStepsWrite(lease: Lease, ended: readonly EndedStep[]) {
  // Kysely puts a raw expression after "as" as it is: the parentheses are the CTE's.
  return sql<Record<string, unknown>>`(${upsertSteps(lease, ended)})`;
}

/**
 * Marks a step running (again, when a previous attempt left it unfinished), and writes the steps
 * that ended before it and were not written yet, in one statement; false when the run is no longer ours.
 */
export async function startStep(
  db: Db,
  lease: Lease,
  node: StepNode,
  ended: readonly EndedStep[] = [],
  deliveries: readonly NewDelivery[] = [],
): Promise<boolean> {
  return writeSteps(db, lease, [...ended, { node, result: undefined }], deliveries);
}

/**
 * Writes steps that have ended (or wait for a review) with no running state first, in one
 * statement: steps that do no I/O, written together at the next step that does, or when the run
 * ends; false when the run is no longer ours.
 */
export async function recordEndedSteps(db: Db, lease: Lease, ended: readonly EndedStep[], deliveries: readonly NewDelivery[] = []): Promise<boolean> {
  if (ended.length === 0) return true;
  return writeSteps(db, lease, ended, deliveries);
}

/** Ends a step; false when the run is no longer ours. A waiting step has no end time until it is decided. */
export async function endStep(db: Db, lease: Lease, position: number, result: StepResult): Promise<boolean> {
  const values = stepValues(result);
  const update = await db
    .updateTable("run_steps")
    .set({ ...values, end_time: "waiting" in result ? null : sql`now()` })
    .where("run_id", "=", lease.runId)
    .where("position", "=", position)
    .where(held(lease))
    .executeTakeFirst();
  return update.numUpdatedRows > 0n;
}

/** The first review step a run in review waits on: its position and what it shows. */
export async function findWaitingReview(db: Db, organizationId: string, runId: string): Promise<{ position: number; output: unknown } | undefined> {
  return db
    .selectFrom("run_steps")
    .innerJoin("runs", "runs.id", "run_steps.run_id")
    .select(["run_steps.position", "run_steps.output"])
    .where("runs.id", "=", runId)
    .where("runs.organization_id", "=", organizationId)
    .where("runs.status", "=", "review")
    .where("run_steps.status", "=", "waiting")
    .orderBy("run_steps.position")
    .limit(1)
    .executeTakeFirst();
}

/**
 * Ends a waiting review step with its decision and queues the run again (a worker continues it, or
 * ends it Failed), in one statement: of two decisions at once, only the first finds the step waiting.
 */
export async function decideReview(db: Db, runId: string, position: number, result: { output: unknown; error?: string }): Promise<boolean> {
  const status = result.error === undefined ? "completed" : "failed";
  // The run is locked first (a cancel or another decision waits), and queued only when this
  // decision found its step waiting: one that lost to another leaves a run that has moved on to its
  // next review where it is.
  const { rows } = await sql<{ position: number }>`
    with run as (
      select id from runs where id = ${runId} and status = 'review' for update
    ),
    decided as (
      update run_steps set status = ${status}, output = ${storableJson(result.output)}::jsonb, error = ${result.error ?? ""}, end_time = now()
      where run_id in (select id from run) and position = ${position} and status = 'waiting'
      returning run_id, position
    ),
    queued as (
      update runs set status = 'queued' where id in (select run_id from decided) and status = 'review'
    )
    select position from decided`.execute(db);
  return rows.length > 0;
}

/** Review steps whose timeout has passed (up to `limit`), with what they show. */
export async function expiredReviews(db: Db, now: Date, limit: number): Promise<{ run_id: string; position: number; output: unknown }[]> {
  return db
    .selectFrom("run_steps")
    .innerJoin("runs", "runs.id", "run_steps.run_id")
    .select(["run_steps.run_id", "run_steps.position", "run_steps.output"])
    .where("runs.status", "=", "review")
    .where("run_steps.status", "=", "waiting")
    .where(sql<boolean>`(run_steps.output ->> 'expireTime')::timestamptz < ${now}`)
    .limit(limit)
    .execute();
}
