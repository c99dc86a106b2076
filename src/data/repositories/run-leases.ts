import { randomUUID } from "node:crypto";
import { type QueryCreator, type Selectable, sql, type UpdateObject } from "kysely";
import { prepared } from "../db/connection.ts";
import { notifyRunsQueued } from "../db/run-notifications.ts";
import type { Database, Db, RunTable } from "../db/schema.ts";
import type { Lease } from "./held-run.ts";
import {
  activeSigningSecrets,
  type DeliveryBody,
  deliveriesLeasedWithRunEnd,
  deliveriesWrite,
  deliveryBodiesWrite,
  type NewDelivery,
} from "./callback-deliveries.ts";
import { type EndedStep, endedStepsWrite } from "./run-steps.ts";

/**
 * What is written with a run's end (or its pause for a review), in the same statement: the steps
 * that did no I/O, the callback deliveries its steps queued, not written yet, and the new bodies of
 * deliveries written earlier (a failing run's end makes them report the failure).
 */
export interface RunEndWrites {
  steps?: readonly EndedStep[];
  deliveries?: readonly NewDelivery[];
  bodies?: readonly DeliveryBody[];
}

// The lease protocol of a worker slot: a claim takes a run and writes its lease; every later write of
// the run's progress holds only while the lease is still this claim's.

export type ClaimedRun = Selectable<RunTable>;

export interface Claim {
  run: ClaimedRun;
  lease: Lease;
}

export interface ClaimOptions {
  /** The claiming process's id; the lease owner starts with it so operators see which process holds a run. */
  workerId: string;
  leaseSeconds: number;
  /** How many runs one organization may hold running at once, across every worker on the database. */
  maxSlotsPerOrganization: number;
}

/**
 * Takes a run for a worker slot, fairly across organizations: the slot goes to the organization that
 * holds the fewest slots (among those below `maxSlotsPerOrganization`), ties to the one whose oldest
 * claimable run has waited longest; within it, its oldest claimable run. So one organization's
 * backlog delays another's document by at most the runs already in progress.
 *
 * Two short statements in one transaction, in the database function `claim_run` (migration
 * 2026-11-24T0500) so a claim is one round trip. The first picks the organization and locks its
 * row, so claims for one organization are serialized (never skipped: a skipping claimer would find
 * nothing and sleep while work waits). The second, with a snapshot taken after that lock, counts
 * the organization's running runs again, so the cap holds exactly whatever other workers do, and
 * takes the run with FOR UPDATE SKIP LOCKED; its status check re-runs on the locked row, so a run
 * cancelled meanwhile is not taken. `undefined` when nothing is claimable, `"contended"` when the
 * chosen organization was filled or emptied by a concurrent claim (claim again at once).
 */
export async function claimRun(db: Db, options: ClaimOptions): Promise<Claim | "contended" | undefined> {
  const owner = `${options.workerId}:${randomUUID()}`;
  const { rows } = await sql<ClaimedRun | { id: null }>`${prepared("claim_run")}
    select * from claim_run(${owner}, ${options.leaseSeconds}, ${options.maxSlotsPerOrganization})`.execute(db);
  const run = rows[0];
  if (run === undefined) return undefined;
  return run.id === null ? "contended" : { run: run as ClaimedRun, lease: { runId: run.id, owner } };
}

/** Extends the lease; false when the run is no longer ours (cancelled, or taken after our lease expired). */
export async function renewLease(db: Db, lease: Lease, leaseSeconds: number): Promise<boolean> {
  return updateHeldRun(db, lease, "renew_lease", { lease_expire_time: sql`now() + make_interval(secs => ${leaseSeconds})` });
}

/** Records the final status, with `writes`, if the run is still ours: a cancelled run stays cancelled. */
export async function finishRun(db: Db, lease: Lease, status: "completed" | "failed", error = "", writes: RunEndWrites = {}): Promise<boolean> {
  return updateHeldRun(db, lease, "finish_run", endValues(status, error), writes);
}

/** What the process that ended a run needs to make the first attempts of the deliveries leased to it. */
export interface LeasedDeliveries {
  /** Each delivery's id (an earlier attempt of the run may have written it first, under another id) by its node. */
  ids: Map<string, string>;
  /** The organization's active signing secrets, sealed, the current one first. */
  signingSecrets: Buffer[];
}

/**
 * finishRun whose deliveries (at least one) are written leased to `leaseOwner`, their first
 * attempts started, in the same statement; undefined when the run is no longer ours. The
 * deliveries follow the run's update (not only the statement's snapshot): a cancel that commits
 * while the statement waits for the run's row leaves neither the run's end nor a leased delivery.
 */
export async function finishRunLeasingDeliveries(
  db: Db,
  lease: Lease,
  status: "completed" | "failed",
  error: string,
  writes: RunEndWrites & { deliveries: readonly NewDelivery[] },
  leaseOwner: string,
): Promise<LeasedDeliveries | undefined> {
  const { steps = [], deliveries, bodies = [] } = writes;
  const leased = deliveriesLeasedWithRunEnd(lease, deliveries, leaseOwner, { ended: "ended", deliveries: "queued_deliveries" });
  const query: QueryCreator<Database> = steps.length === 0 ? db : db.with("ended_steps", () => endedStepsWrite(lease, steps));
  const rewriting = bodies.length > 0;
  const ending = query
    .with("ended", (creator) => creator.updateTable("runs").set(endValues(status, error)).where(heldByLease(lease)).returning("organization_id"))
    .with("queued_deliveries", () => leased.deliveries)
    .with("started_attempts", () => leased.attempts);
  const row = await (rewriting ? ending.with("rewritten_deliveries", () => deliveryBodiesWrite(lease, bodies, "ended")) : ending)
    .selectFrom("ended")
    .select([
      sql<{ id: string; node_id: string }[]>`(select coalesce(json_agg(q), '[]'::json) from queued_deliveries q)`.as("leased"),
      activeSigningSecrets(sql.ref("ended.organization_id")).as("signing_secrets"),
    ])
    .modifyEnd(prepared(`finish_run_leasing${steps.length === 0 ? "" : "_steps"}${rewriting ? "_bodies" : ""}`))
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { ids: new Map(row.leased.map((delivery) => [delivery.node_id, delivery.id])), signingSecrets: row.signing_secrets };
}

/** A run's final status. */
function endValues(status: "completed" | "failed", error: string): UpdateObject<Database, "runs"> {
  return { status, error, end_time: sql`now()`, lease_owner: null, lease_expire_time: null };
}

/**
 * Parks the run in 'review' when a step waits for a decision, if the run is still ours; it leaves the
 * worker (no lease) and its attempts start again, since waiting is not a worker's failure.
 */
export async function pauseRunForReview(db: Db, lease: Lease, writes: RunEndWrites = {}): Promise<boolean> {
  return updateHeldRun(db, lease, "pause_run", { status: "review", lease_owner: null, lease_expire_time: null, attempts: 0 }, writes);
}

/**
 * Gives a run back to the queue when its worker stops gracefully; the attempt is not counted, and
 * another worker (woken by the queued notification) resumes it from its last completed step.
 */
export async function releaseRun(db: Db, lease: Lease): Promise<void> {
  const released = await updateHeldRun(db, lease, "release_run", {
    status: "queued",
    lease_owner: null,
    lease_expire_time: null,
    attempts: sql`greatest(attempts - 1, 0)`,
  });
  // A notification that fails only leaves the run to the next poll.
  if (released) await notifyRunsQueued(db).catch(() => {});
}

/**
 * Writes `values` on the run if this lease still holds it (running, under this claim's owner), and
 * `writes`, in one statement prepared as `name` (a name per caller: each sets other columns, and
 * per shape: with or without steps, deliveries and bodies); false otherwise. The guard takes no
 * lock: a cancel that commits while the statement runs leaves its steps written on the cancelled
 * run; its deliveries (and their bodies) follow the update itself, and are not written.
 */
async function updateHeldRun(db: Db, lease: Lease, name: string, values: UpdateObject<Database, "runs">, writes: RunEndWrites = {}): Promise<boolean> {
  const { steps = [], deliveries = [], bodies = [] } = writes;
  const shape = `${name}${steps.length > 0 ? "_steps" : ""}${deliveries.length > 0 ? "_deliveries" : ""}${bodies.length > 0 ? "_bodies" : ""}`;
  const query: QueryCreator<Database> = steps.length === 0 ? db : db.with("ended_steps", () => endedStepsWrite(lease, steps));
  if (deliveries.length === 0 && bodies.length === 0) {
    const result = await query.updateTable("runs").set(values).where(heldByLease(lease)).modifyEnd(prepared(shape)).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
  // The deliveries follow the run's update (see deliveriesWrite), so the update is a table of its own.
  const updating = query.with("updated", (creator) => creator.updateTable("runs").set(values).where(heldByLease(lease)).returning("id"));
  const queuing = deliveries.length === 0 ? updating : updating.with("queued_deliveries", () => deliveriesWrite(lease, deliveries, "updated"));
  const row = await (bodies.length === 0 ? queuing : queuing.with("rewritten_deliveries", () => deliveryBodiesWrite(lease, bodies, "updated")))
    .selectFrom("updated")
    .select("id")
    .modifyEnd(prepared(shape))
    .executeTakeFirst();
  return row !== undefined;
}

/** The run's row while this lease holds it: running, under this claim's owner (for an update's where). */
function heldByLease(lease: Lease) {
  return sql<boolean>`id = ${lease.runId}::uuid and status = 'running' and lease_owner = ${lease.owner}`;
}
