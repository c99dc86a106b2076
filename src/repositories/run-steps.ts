import { type Selectable, sql } from "kysely";
import type { Db, RunStepTable } from "../db/schema.ts";
import { storableJson } from "../db/storable.ts";
import type { Lease } from "./runs.ts";

export type RunStepRow = Selectable<RunStepTable>;

/** The steps of a run, in pipeline order. */
export async function listRunSteps(db: Db, runId: string): Promise<RunStepRow[]> {
  return db.selectFrom("run_steps").selectAll().where("run_id", "=", runId).orderBy("position").execute();
}

/** The steps a run has recorded, by position: a resumed run skips the completed ones. */
export async function recordedSteps(db: Db, runId: string): Promise<Map<number, RunStepRow>> {
  return new Map((await listRunSteps(db, runId)).map((row) => [row.position, row]));
}

/** SQL true while the run is running under this lease; guards every step write (and a callback's delivery). */
export function held(lease: Lease) {
  return sql<boolean>`exists (select 1 from runs where id = ${lease.runId} and status = 'running' and lease_owner = ${lease.owner})`;
}

export interface StepNode {
  position: number;
  nodeId: string;
  nodeType: string;
}

/** Marks a step running (again, when a previous attempt left it unfinished); false when the run is no longer ours. */
export async function startStep(db: Db, lease: Lease, node: StepNode): Promise<boolean> {
  const { rows } = await sql`
    insert into run_steps (run_id, position, node_id, node_type, status, start_time, end_time, output, error)
    select ${lease.runId}, ${node.position}, ${node.nodeId}, ${node.nodeType}, 'running', now(), null, null, ''
    where ${held(lease)}
    on conflict (run_id, position) do update set
      status = 'running', start_time = now(), end_time = null, output = null, error = ''
    returning 1`.execute(db);
  return rows.length > 0;
}

/** Ends a step with its output (completed) or error (failed); false when the run is no longer ours. */
export async function endStep(db: Db, lease: Lease, position: number, result: { output: unknown } | { error: string }): Promise<boolean> {
  const values = "error" in result ? { status: "failed" as const, error: result.error } : { status: "completed" as const, output: storableJson(result.output) };
  const update = await db
    .updateTable("run_steps")
    .set({ ...values, end_time: sql`now()` })
    .where("run_id", "=", lease.runId)
    .where("position", "=", position)
    .where(held(lease))
    .executeTakeFirst();
  return update.numUpdatedRows > 0n;
}
