import { randomUUID } from "node:crypto";
import { type RawBuilder, type Selectable, sql } from "kysely";
import { prepared } from "../db/connection.ts";
import { storableJson } from "../db/storable.ts";
import type { CallbackDeliveryAttemptTable, CallbackDeliveryTable, Db } from "../db/schema.ts";
import { held, type Lease } from "./held-run.ts";

type DeliveryRow = Selectable<CallbackDeliveryTable>;
type DeliveryAttemptRow = Selectable<CallbackDeliveryAttemptTable>;

/** A delivery with its attempts, oldest first, as RunService shows it. */
export type DeliveryWithAttempts = Omit<DeliveryRow, "body" | "headers"> & { attempts_made: DeliveryAttemptRow[] };

export interface NewDelivery {
  /** Made when the callback step runs, so the step names it before it is written. */
  id: string;
  organizationId: string;
  nodeId: string;
  url: string;
  method: string;
  /** The callback node's headers as the pipeline stores them (values sealed). */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  /** Retries after the first attempt. */
  retries: number;
  body: string;
}

/** Seconds a claimed attempt holds its delivery beyond its own timeout, before another worker may retry it. */
const LEASE_MARGIN_SECONDS = 30;

/**
 * The statement that writes the run's deliveries, one per callback node, when `guard` holds (the
 * run is still ours). Each is written in the statement that writes its step. One a worker of an
 * earlier version wrote before its step (and died) is written again: the same row, its first id,
 * the payload rebuilt, so nothing is sent twice.
 * A delivery becomes due when the run completes or fails (claimDelivery), so it is sent only once
 * the run's final status is committed. Written with the run's end, its first attempt may be leased
 * to `leaseOwner` at once: the process that ended the run makes it, without a claim (see
 * deliveriesLeasedWithRunEnd). Returns each delivery's id and node.
 */
function insertDeliveries(runId: string, deliveries: readonly NewDelivery[], guard: RawBuilder<unknown>, leaseOwner: string | null) {
  // One array per column, so the statement's text is the same for any number of deliveries (see prepared).
  const column = <T>(value: (delivery: NewDelivery) => T) => deliveries.map(value);
  // A delivery whose run is held has never been attempted: a leased one's first attempt is number 1.
  const leased = leaseOwner !== null;
  const columns = sql.raw(
    `id, run_id, organization_id, node_id, url, method, headers, timeout_ms, body, status, last_attempt, next_attempt_time${leased ? ", attempts, lease_owner, lease_expire_time" : ""}`,
  );
  const leaseValues = leased
    ? sql`, 1, ${leaseOwner}::text, now() + make_interval(secs => delivery.timeout_ms / 1000.0 + ${LEASE_MARGIN_SECONDS}::float8)`
    : sql``;
  const leaseUpdate = leased ? sql`, attempts = excluded.attempts, lease_owner = excluded.lease_owner, lease_expire_time = excluded.lease_expire_time` : sql``;
  return sql`
    insert into callback_deliveries (${columns})
    select delivery.id, ${runId}::uuid, delivery.organization_id, delivery.node_id, delivery.url, delivery.method, delivery.headers,
      delivery.timeout_ms, delivery.body, 'pending', delivery.last_attempt, now()${leaseValues}
    from unnest(
      ${column((delivery) => delivery.id)}::uuid[], ${column((delivery) => delivery.organizationId)}::uuid[], ${column((delivery) => delivery.nodeId)}::text[],
      ${column((delivery) => delivery.url)}::text[], ${column((delivery) => delivery.method)}::text[],
      ${column((delivery) => storableJson(delivery.headers))}::jsonb[], ${column((delivery) => delivery.timeoutMs)}::integer[],
      ${column((delivery) => delivery.body)}::text[], ${column((delivery) => delivery.retries + 1)}::integer[]
    ) as delivery (id, organization_id, node_id, url, method, headers, timeout_ms, body, last_attempt)
    where ${guard}
    on conflict (run_id, node_id) do update set
      url = excluded.url, method = excluded.method, headers = excluded.headers, timeout_ms = excluded.timeout_ms,
      body = excluded.body, last_attempt = excluded.last_attempt, next_attempt_time = now(), update_time = now()${leaseUpdate}
    returning id, node_id`;
}

/**
 * The statement that writes deliveries, for a common table expression of the statement that
 * writes their steps (the run's end in run-leases.ts, a step's start in run-steps.ts). With
 * `updated`, the name of that statement's update of the run, they are written only when it has a
 * row: the lease's check on the statement's snapshot would pass though a cancel committed while
 * the update waited for the run's row, and the delivery, never due, would stay pending for ever.
 */
export function deliveriesWrite(lease: Lease, deliveries: readonly NewDelivery[], updated?: string) {
  const guard = updated === undefined ? held(lease) : sql`exists (select 1 from ${sql.table(updated)})`;
  // Kysely puts a raw expression after "as" as it is: the parentheses are the CTE's.
  return sql<Record<string, unknown>>`(${insertDeliveries(lease.runId, deliveries, guard, null)})`;
}

/**
 * What the run's end writes for deliveries whose first attempt its process makes at once: the
 * deliveries leased to `leaseOwner`, written only when the table `tables.ended` (the run's update)
 * has a row, which a cancel that committed meanwhile leaves empty; then, from `tables.deliveries`
 * (the first part), their attempts' start, as a claim records it. That saves a claim statement per
 * delivery, and the wait for a queue slot to notice the run has ended.
 */
export function deliveriesLeasedWithRunEnd(
  lease: Lease,
  deliveries: readonly NewDelivery[],
  leaseOwner: string,
  tables: { ended: string; deliveries: string },
) {
  const ended = sql`exists (select 1 from ${sql.table(tables.ended)})`;
  return {
    deliveries: sql<{ id: string; node_id: string }>`(${insertDeliveries(lease.runId, deliveries, ended, leaseOwner)})`,
    attempts: sql<Record<string, unknown>>`(insert into callback_delivery_attempts (delivery_id, number, start_time)
      select id, 1, now() from ${sql.table(tables.deliveries)}
      on conflict (delivery_id, number) do update set start_time = excluded.start_time, duration_ms = null, http_status = null, error = '', next_attempt_time = null)`,
  };
}

/** A delivery's body as a run's end rewrites it (a failing run's callbacks that ran before the failure). */
export interface DeliveryBody {
  id: string;
  body: string;
}

/**
 * The run's deliveries still pending, with their bodies: none is sent before its run has ended, so
 * a failing run's end may still change what they report.
 */
export async function pendingDeliveryBodies(db: Db, runId: string): Promise<{ id: string; node_id: string; body: string }[]> {
  return db.selectFrom("callback_deliveries").select(["id", "node_id", "body"]).where("run_id", "=", runId).where("status", "=", "pending").execute();
}

/**
 * The statement that replaces the bodies of deliveries written earlier, for a common table
 * expression of the statement that ends their run: written only when the table `ended` (the run's
 * update) has a row, and only to deliveries still pending.
 */
export function deliveryBodiesWrite(lease: Lease, bodies: readonly DeliveryBody[], ended: string) {
  return sql<Record<string, unknown>>`(update callback_deliveries d set body = rewritten.body, update_time = now()
    from unnest(${bodies.map((each) => each.id)}::uuid[], ${bodies.map((each) => each.body)}::text[]) as rewritten (id, body)
    where d.id = rewritten.id and d.run_id = ${lease.runId}::uuid and d.status = 'pending'
      and exists (select 1 from ${sql.table(ended)}))`;
}

/** The sealed signing secrets an organization signs with now, the current one first: every attempt sends a signature from each. */
export function activeSigningSecrets(organizationId: RawBuilder<unknown>) {
  return sql<Buffer[]>`array(
    select s.ciphertext from signing_secrets s
    where s.organization_id = ${organizationId} and (s.expire_time is null or s.expire_time > now())
    order by s.expire_time desc nulls first
  )`;
}

/** Who makes one attempt of a delivery: every write of its result is guarded by it. */
export interface DeliveryLease {
  deliveryId: string;
  owner: string;
  /** The attempt's number (1-based, across redeliveries). */
  attempt: number;
}

/**
 * The delivery's columns a claim returns, each named: the claim is a prepared statement, whose result
 * must keep its shape when a migration adds a column (a `*` would fail every claim of a process
 * started before it, "cached plan must not change result type", until it restarts).
 */
const CLAIMED = ["id", "run_id", "organization_id", "node_id", "url", "method", "headers", "timeout_ms", "body", "attempts", "last_attempt"] as const;
const CLAIMED_COLUMNS = sql.raw(CLAIMED.map((column) => `claimed.${column}`).join(", "));

/**
 * Takes the delivery due longest ago (pending, its next attempt time passed, its run completed or
 * failed, not held under a live lease), counts the attempt and records its start, in one statement.
 * The lease outlasts the attempt's timeout, so an attempt is never made twice at the same time; one
 * cut off by its worker's death is closed with an error, and the delivery retried once the lease expires.
 */
export async function claimDelivery(db: Db, workerId: string): Promise<{ delivery: ClaimedDelivery; lease: DeliveryLease } | undefined> {
  const owner = `${workerId}:${randomUUID()}`;
  const { rows } = await sql<ClaimedDelivery>`${prepared("claim_delivery")}
    with claimed as (
      update callback_deliveries set
        attempts = attempts + 1,
        lease_owner = ${owner},
        lease_expire_time = now() + make_interval(secs => timeout_ms / 1000.0 + ${LEASE_MARGIN_SECONDS}),
        update_time = now()
      where id = (
        select d.id from callback_deliveries d join runs r on r.id = d.run_id
        where d.status = 'pending' and d.next_attempt_time <= now()
          and (d.lease_expire_time is null or d.lease_expire_time < now())
          and r.status in ('completed', 'failed')
        order by d.next_attempt_time
        limit 1
        for update of d skip locked
      ) and status = 'pending'
      returning *
    ),
    abandoned as (
      update callback_delivery_attempts set
        duration_ms = (extract(epoch from now() - start_time) * 1000)::int,
        error = 'the worker making this attempt stopped before it ended'
      where delivery_id in (select id from claimed) and duration_ms is null
    ),
    started as (
      insert into callback_delivery_attempts (delivery_id, number, start_time)
      select id, attempts, now() from claimed
    )
    select ${CLAIMED_COLUMNS},
      (select trace_parent from runs where runs.id = claimed.run_id) as trace_parent,
      ${activeSigningSecrets(sql.ref("claimed.organization_id"))} as signing_secrets,
      exists (
        select 1 from callback_deliveries d join runs r on r.id = d.run_id
        where d.id <> claimed.id and d.status = 'pending' and d.next_attempt_time <= now()
          and (d.lease_expire_time is null or d.lease_expire_time < now())
          and r.status in ('completed', 'failed')
      ) as more
    from claimed`.execute(db);
  const delivery = rows[0];
  return delivery === undefined ? undefined : { delivery, lease: { deliveryId: delivery.id, owner, attempt: delivery.attempts } };
}

/**
 * A claimed delivery, with the traceparent of the submission its run came from (its attempt's span
 * joins that trace), its organization's active signing secrets (sealed, the current one first), and
 * whether another delivery was due when it was claimed (if not, the slot waits for a notification
 * rather than spend a statement finding nothing).
 */
export type ClaimedDelivery = Pick<DeliveryRow, (typeof CLAIMED)[number]> & { trace_parent: string | null; signing_secrets: Buffer[]; more: boolean };

/** How an attempt ended, as recorded. */
export interface AttemptRecord {
  durationMs: number;
  /** The receiver's status, when it answered. */
  httpStatus?: number | undefined;
  /** Empty when delivered. */
  error: string;
  /**
   * What follows: delivered; failed for good; a retry after `delayMs`; or a retry at once that does
   * not use up an attempt of the schedule (the worker stopped during this one).
   */
  next: { status: "delivered" } | { status: "failed" } | { status: "retry"; delayMs: number } | { status: "retry_now" };
}

/** Records the attempt's end and the delivery's next state, if the attempt is still ours; returns whether it was. */
export async function finishAttempt(db: Db, lease: DeliveryLease, record: AttemptRecord): Promise<boolean> {
  const { next } = record;
  const status = next.status === "delivered" || next.status === "failed" ? next.status : "pending";
  const delayMs = next.status === "retry" ? next.delayMs : next.status === "retry_now" ? 0 : null;
  const { rows } = await sql<{ id: string }>`${prepared("finish_delivery_attempt")}
    with finished as (
      update callback_deliveries set
        status = ${status},
        next_attempt_time = case when ${delayMs}::float8 is null then null else now() + make_interval(secs => ${delayMs}::float8 / 1000) end,
        last_attempt = last_attempt + ${next.status === "retry_now" ? 1 : 0},
        lease_owner = null,
        lease_expire_time = null,
        update_time = now()
      where id = ${lease.deliveryId}::uuid and lease_owner = ${lease.owner} and status = 'pending'
      returning id, next_attempt_time
    ),
    recorded as (
      update callback_delivery_attempts a set
        duration_ms = ${Math.round(record.durationMs)},
        http_status = ${record.httpStatus ?? null}::int,
        error = ${record.error},
        next_attempt_time = finished.next_attempt_time
      from finished
      where a.delivery_id = finished.id and a.number = ${lease.attempt}
    )
    select id from finished`.execute(db);
  return rows.length > 0;
}

/** The deliveries of a run with their attempts, in the order the callback nodes wrote them. */
export async function listRunDeliveries(db: Db, runId: string): Promise<DeliveryWithAttempts[]> {
  const deliveries = await db
    .selectFrom("callback_deliveries")
    .select([
      "id",
      "run_id",
      "organization_id",
      "node_id",
      "url",
      "method",
      "timeout_ms",
      "status",
      "attempts",
      "last_attempt",
      "next_attempt_time",
      "lease_owner",
      "lease_expire_time",
      "create_time",
      "update_time",
    ])
    .where("run_id", "=", runId)
    .orderBy("create_time")
    .orderBy("node_id")
    .execute();
  if (deliveries.length === 0) return [];
  const attempts = await db
    .selectFrom("callback_delivery_attempts")
    .selectAll()
    .where(
      "delivery_id",
      "in",
      deliveries.map((delivery) => delivery.id),
    )
    .orderBy("number")
    .execute();
  return deliveries.map((delivery) => ({ ...delivery, attempts_made: attempts.filter((attempt) => attempt.delivery_id === delivery.id) }));
}

export type RedeliverResult = "scheduled" | "not_found" | "in_progress" | "cancelled";

/**
 * Schedules one more attempt of a delivery of the organization's run, now: a delivered or failed
 * delivery gets a new attempt (it does not resend anything by itself: the queue makes the attempt),
 * a pending one is brought forward. Refused while an attempt is in flight, and for a cancelled run.
 */
export async function redeliver(db: Db, organizationId: string, runId: string, deliveryId: string): Promise<RedeliverResult> {
  const { rows } = await sql<{ status: string; in_flight: boolean; scheduled: boolean }>`
    with target as (
      select id, status, (lease_owner is not null and lease_expire_time >= now()) as in_flight
      from callback_deliveries
      where id = ${deliveryId}::uuid and run_id = ${runId}::uuid and organization_id = ${organizationId}::uuid
      for update
    ),
    scheduled as (
      update callback_deliveries d set
        status = 'pending',
        next_attempt_time = now(),
        last_attempt = case when d.status = 'pending' then d.last_attempt else d.attempts + 1 end,
        lease_owner = null,
        lease_expire_time = null,
        update_time = now()
      from target
      where d.id = target.id and not target.in_flight and target.status <> 'cancelled'
      returning d.id
    )
    select target.status, target.in_flight, exists (select 1 from scheduled) as scheduled from target`.execute(db);
  const target = rows[0];
  if (target === undefined) return "not_found";
  if (target.scheduled) return "scheduled";
  return target.in_flight ? "in_progress" : "cancelled";
}
