import { randomUUID } from "node:crypto";
import { type Kysely, type Selectable, sql } from "kysely";
import { notifyRunsQueued } from "../db/run-notifications.ts";
import type { Database, RunTable } from "../db/schema.ts";

export type ClaimedRun = Selectable<RunTable>;

/**
 * Who holds a run: the owner one claim wrote on it, `<worker id>:<uuid>`; every write of a run's progress
 * is guarded by it. Unique per claim, so a run taken over after its lease expired is lost to its
 * previous holder even when both claims come from the same worker process.
 */
export interface Lease {
  runId: string;
  owner: string;
}

export interface Claim {
  run: ClaimedRun;
  lease: Lease;
}

export interface ClaimOptions {
  /** The claiming process's id; the lease owner starts with it so operators see which process holds a run. */
  workerId: string;
  leaseSeconds: number;
  /** Only runs of this organization (tests sharing a database; a dedicated tenant worker). */
  organizationId?: string | undefined;
}

/**
 * Takes the oldest run that is queued, or running under a lease that has expired (its worker died),
 * and leases it to a new owner of `workerId`, in one statement. FOR UPDATE SKIP LOCKED lets many
 * workers claim at once without waiting on or taking each other's rows; the status check in the outer
 * update re-runs on the locked row, so a run cancelled meanwhile is not taken.
 */
export async function claimRun(db: Kysely<Database>, options: ClaimOptions): Promise<Claim | undefined> {
  const owner = `${options.workerId}:${randomUUID()}`;
  const organizationFilter = options.organizationId === undefined ? sql`` : sql`and organization_id = ${options.organizationId}`;
  const { rows } = await sql<ClaimedRun>`
    update runs set
      status = 'running',
      lease_owner = ${owner},
      lease_expire_time = now() + make_interval(secs => ${options.leaseSeconds}),
      attempts = attempts + 1,
      start_time = coalesce(start_time, now())
    where id = (
      select id from runs
      where (status = 'queued' or (status = 'running' and lease_expire_time < now())) ${organizationFilter}
      order by create_time
      limit 1
      for update skip locked
    ) and status in ('queued', 'running')
    returning *`.execute(db);
  const run = rows[0];
  return run === undefined ? undefined : { run, lease: { runId: run.id, owner } };
}

/** Extends the lease; false when the run is no longer ours (cancelled, or taken after our lease expired). */
export async function renewLease(db: Kysely<Database>, lease: Lease, leaseSeconds: number): Promise<boolean> {
  const result = await db
    .updateTable("runs")
    .set({ lease_expire_time: sql`now() + make_interval(secs => ${leaseSeconds})` })
    .where("id", "=", lease.runId)
    .where("status", "=", "running")
    .where("lease_owner", "=", lease.owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Records the final status, if the run is still ours: a cancelled run stays cancelled. */
export async function finishRun(db: Kysely<Database>, lease: Lease, status: "completed" | "failed", error = ""): Promise<boolean> {
  const result = await db
    .updateTable("runs")
    .set({ status, error, end_time: sql`now()`, lease_owner: null, lease_expire_time: null })
    .where("id", "=", lease.runId)
    .where("status", "=", "running")
    .where("lease_owner", "=", lease.owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Gives a run back to the queue when its worker stops gracefully; the attempt is not counted, and
 * another worker (woken by the queued notification) resumes it from its last completed step.
 */
export async function releaseRun(db: Kysely<Database>, lease: Lease): Promise<void> {
  const result = await db
    .updateTable("runs")
    .set({ status: "queued", lease_owner: null, lease_expire_time: null, attempts: sql`greatest(attempts - 1, 0)` })
    .where("id", "=", lease.runId)
    .where("status", "=", "running")
    .where("lease_owner", "=", lease.owner)
    .executeTakeFirst();
  // A notification that fails only leaves the run to the next poll.
  if (result.numUpdatedRows > 0n) await notifyRunsQueued(db).catch(() => {});
}
