import { randomUUID } from "node:crypto";
import { type Selectable, sql } from "kysely";
import { prepared } from "../db/connection.ts";
import { notifyRunsQueued } from "../db/run-notifications.ts";
import type { Db, RunEmail, RunStatus, RunTable } from "../db/schema.ts";
import { newId } from "../ids.ts";

/** A run with the columns of its file, as the run queries return it. */
export interface RunRow {
  id: string;
  organization_id: string;
  workspace_id: string;
  pipe_id: string;
  pipeline_version: number;
  status: RunStatus;
  error: string;
  create_time: Date;
  start_time: Date | null;
  end_time: Date | null;
  file_id: string;
  file_name: string;
  file_content_type: string;
  file_format: string;
  /** bigint arrives from pg as a string. */
  file_size: string;
  file_sha256: string;
  rerun_of: string | null;
  parent_run_id: string | null;
  part_index: number | null;
  part_label: string | null;
}

export interface NewFile {
  name: string;
  contentType: string;
  format: string;
  size: bigint;
  sha256: string;
}

export interface NewRun {
  organizationId: string;
  pipeId: string;
  pipelineVersion: number;
  apiKeyId: string | null;
  file: NewFile;
  createTime: Date;
  /** W3C traceparent of the submission, when tracing is on. */
  traceParent?: string | null;
  /** The message the document came attached to, when it came by email. */
  email?: RunEmail | null;
}

export interface RunFilter {
  organizationId: string;
  workspaceId?: string;
  pipeId?: string;
  parentRunId?: string;
  status?: RunStatus;
  createTimeAfter?: Date;
  createTimeBefore?: Date;
}

/** The statuses a run can still be cancelled from. */
const UNFINISHED: RunStatus[] = ["queued", "running", "review", "awaiting_children"];

function selectRuns(db: Db) {
  return db
    .selectFrom("runs")
    .innerJoin("files", "files.id", "runs.file_id")
    .select([
      "runs.id",
      "runs.organization_id",
      "runs.workspace_id",
      "runs.pipe_id",
      "runs.pipeline_version",
      "runs.status",
      "runs.error",
      "runs.create_time",
      "runs.start_time",
      "runs.end_time",
      "files.id as file_id",
      "files.name as file_name",
      "files.content_type as file_content_type",
      "files.format as file_format",
      "files.size as file_size",
      "files.sha256 as file_sha256",
      "runs.rerun_of",
      "runs.parent_run_id",
      "runs.part_index",
      "runs.part_label",
    ]);
}

export type QueuedRunResult = { outcome: "created"; run: RunRow } | { outcome: "pipe_not_found" | "pipeline_version_not_found" | "api_key_not_found" };

/**
 * Checks the pipe (same organization, active, not deleted, the pipeline version exists, the API key
 * is the organization's) and inserts the file row and a queued run, in one statement: one round trip
 * on the submission path, atomic without an explicit transaction. Checking "active" here, at the
 * moment of insertion, is what makes a pause or delete exact whatever the edge had resolved before.
 */
export async function insertQueuedRun(db: Db, run: NewRun): Promise<QueuedRunResult> {
  const fileId = newId();
  const runId = newId();
  const { file } = run;
  const { rows } = await sql<{ workspace_id: string; has_version: boolean; has_api_key: boolean }>`${prepared("insert_queued_run")}
    with pipe as (
      select p.workspace_id,
        exists (select 1 from pipeline_versions v where v.pipe_id = p.id and v.version = ${run.pipelineVersion}) as has_version,
        (${run.apiKeyId}::uuid is null or exists (
          select 1 from api_keys k where k.id = ${run.apiKeyId}::uuid and k.organization_id = p.organization_id)) as has_api_key
      from pipes p
      where p.id = ${run.pipeId}::uuid and p.organization_id = ${run.organizationId}::uuid and p.delete_time is null
        and p.state = 'active'
    ),
    new_file as (
      insert into files (id, organization_id, name, content_type, format, size, sha256, create_time)
      select ${fileId}::uuid, ${run.organizationId}::uuid, ${file.name}, ${file.contentType}, ${file.format},
        ${file.size.toString()}::bigint, ${file.sha256}, ${run.createTime}
      from pipe where has_version and has_api_key
      returning id
    ),
    new_run as (
      insert into runs (id, organization_id, workspace_id, pipe_id, pipeline_version, file_id, api_key_id, status, create_time, trace_parent, email)
      select ${runId}::uuid, ${run.organizationId}::uuid, pipe.workspace_id, ${run.pipeId}::uuid, ${run.pipelineVersion},
        new_file.id, ${run.apiKeyId}::uuid, 'queued', ${run.createTime}, ${run.traceParent ?? null}::text, ${run.email == null ? null : JSON.stringify(run.email)}::jsonb
      from pipe, new_file
      returning id
    )
    select workspace_id, has_version, has_api_key from pipe`.execute(db);
  const pipe = rows[0];
  if (pipe === undefined) return { outcome: "pipe_not_found" };
  if (!pipe.has_version) return { outcome: "pipeline_version_not_found" };
  if (!pipe.has_api_key) return { outcome: "api_key_not_found" };
  return {
    outcome: "created",
    run: {
      id: runId,
      organization_id: run.organizationId,
      workspace_id: pipe.workspace_id,
      pipe_id: run.pipeId,
      pipeline_version: run.pipelineVersion,
      status: "queued",
      error: "",
      create_time: run.createTime,
      start_time: null,
      end_time: null,
      file_id: fileId,
      file_name: file.name,
      file_content_type: file.contentType,
      file_format: file.format,
      file_size: file.size.toString(),
      file_sha256: file.sha256,
      rerun_of: null,
      parent_run_id: null,
      part_index: null,
      part_label: null,
    },
  };
}

/** A step a rerun reuses from the run it reruns, at its position in the current pipeline. */
export interface ReusedStep {
  position: number;
  nodeId: string;
  nodeType: string;
  output: string;
}

/**
 * Queues a new run of the source run's file with its pipe's current pipeline version, recording
 * the run it reran, with the steps it reuses already completed; run it in a transaction. Undefined
 * when the pipe has been deleted.
 */
export async function insertRerun(db: Db, source: RunRow, reused: readonly ReusedStep[], createTime: Date): Promise<string | undefined> {
  const runId = newId();
  const inserted = await db
    .insertInto("runs")
    .columns(["id", "organization_id", "workspace_id", "pipe_id", "pipeline_version", "file_id", "status", "create_time", "rerun_of"])
    .expression((eb) =>
      eb
        .selectFrom("pipes")
        .select([
          sql<string>`${runId}::uuid`.as("id"),
          "organization_id",
          "workspace_id",
          "id as pipe_id",
          "pipeline_version",
          sql<string>`${source.file_id}::uuid`.as("file_id"),
          sql<string>`'queued'`.as("status"),
          sql<Date>`${createTime}::timestamptz`.as("create_time"),
          sql<string>`${source.id}::uuid`.as("rerun_of"),
        ])
        .where("id", "=", source.pipe_id)
        .where("organization_id", "=", source.organization_id)
        .where("delete_time", "is", null),
    )
    .executeTakeFirst();
  if (inserted.numInsertedOrUpdatedRows === 0n) return undefined;
  if (reused.length > 0) {
    await db
      .insertInto("run_steps")
      .values(
        reused.map((step) => ({
          run_id: runId,
          position: step.position,
          node_id: step.nodeId,
          node_type: step.nodeType,
          status: "completed" as const,
          start_time: createTime,
          end_time: createTime,
          output: step.output,
        })),
      )
      .execute();
  }
  return runId;
}

/** The run of the organization with its file, or undefined. */
export async function findRun(db: Db, organizationId: string, runId: string): Promise<RunRow | undefined> {
  return selectRuns(db).where("runs.id", "=", runId).where("runs.organization_id", "=", organizationId).executeTakeFirst();
}

/** Up to `limit` runs matching `filter`, newest first, after the run id `afterId` (keyset paging). */
export async function listRuns(db: Db, filter: RunFilter, afterId: string | undefined, limit: number): Promise<RunRow[]> {
  let query = selectRuns(db).where("runs.organization_id", "=", filter.organizationId);
  if (filter.workspaceId !== undefined) query = query.where("runs.workspace_id", "=", filter.workspaceId);
  if (filter.pipeId !== undefined) query = query.where("runs.pipe_id", "=", filter.pipeId);
  if (filter.parentRunId !== undefined) query = query.where("runs.parent_run_id", "=", filter.parentRunId);
  if (filter.status !== undefined) query = query.where("runs.status", "=", filter.status);
  if (filter.createTimeAfter !== undefined) query = query.where("runs.create_time", ">=", filter.createTimeAfter);
  if (filter.createTimeBefore !== undefined) query = query.where("runs.create_time", "<", filter.createTimeBefore);
  if (afterId !== undefined) query = query.where("runs.id", "<", afterId);
  return query.orderBy("runs.id", "desc").limit(limit).execute();
}

/**
 * Cancels the run if it has not ended, in one statement so a worker finishing it at the same moment
 * cannot be overwritten; its unfinished child runs are cancelled with it (the runs_family trigger).
 * Returns whether it was cancelled.
 */
export async function cancelUnfinishedRun(db: Db, organizationId: string, runId: string, endTime: Date): Promise<boolean> {
  const cancelled = await db
    .updateTable("runs")
    .set({ status: "cancelled", end_time: endTime, lease_owner: null, lease_expire_time: null })
    .where("id", "=", runId)
    .where("organization_id", "=", organizationId)
    .where("status", "in", UNFINISHED)
    .returning("id")
    .executeTakeFirst();
  return cancelled !== undefined;
}

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
export async function finishRun(db: Db, lease: Lease, status: "completed" | "failed", error = ""): Promise<boolean> {
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
 * Parks the run in 'review' when a step waits for a decision, if the run is still ours; it leaves the
 * worker (no lease) and its attempts start again, since waiting is not a worker's failure.
 */
export async function pauseRunForReview(db: Db, lease: Lease): Promise<boolean> {
  const result = await db
    .updateTable("runs")
    .set({ status: "review", lease_owner: null, lease_expire_time: null, attempts: 0 })
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
export async function releaseRun(db: Db, lease: Lease): Promise<void> {
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

/** How many runs are queued and how long the oldest has waited; one read of the pending-runs index. */
export async function queueStats(db: Db): Promise<{ queued: number; oldestAgeSeconds: number }> {
  const { rows } = await sql<{ queued: string; oldest_age: number | null }>`${prepared("queue_stats")}
    select count(*) as queued, extract(epoch from now() - min(create_time))::float8 as oldest_age
    from runs where status = 'queued'`.execute(db);
  const row = rows[0]!;
  return { queued: Number(row.queued), oldestAgeSeconds: Math.max(0, row.oldest_age ?? 0) };
}

/**
 * Deletes up to `limit` ended runs older than their pipe's retention_days (pipes with 0 keep every
 * run), each with its child runs (a split's parts), and by cascade their steps, callback deliveries
 * and attempts and idempotency keys; returns how many runs it deleted, children included, and the
 * file ids they named. A run whose callback (or a child's) is still to be delivered waits for its
 * delivery. Rows another transaction holds are skipped (the next batch or sweep takes them), so the
 * statement never waits on a lock.
 */
export async function deleteExpiredRuns(db: Db, now: Date, limit: number): Promise<{ runs: number; fileIds: string[] }> {
  const rows = await db
    .with("expired", (qb) =>
      qb
        .selectFrom("runs as r")
        .innerJoin("pipes as p", "p.id", "r.pipe_id")
        .select("r.id")
        .where("p.retention_days", ">", 0)
        .where("r.parent_run_id", "is", null)
        .where("r.status", "in", ["completed", "failed", "cancelled"])
        .where("r.create_time", "<", sql<Date>`${now}::timestamptz - make_interval(days => p.retention_days)`)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("callback_deliveries as d")
                .innerJoin("runs as family", "family.id", "d.run_id")
                .select(sql.lit(1).as("one"))
                .where((eb) => eb.or([eb("family.id", "=", eb.ref("r.id")), eb("family.parent_run_id", "=", eb.ref("r.id"))]))
                .where("d.status", "=", "pending"),
            ),
          ),
        )
        .limit(limit)
        .forUpdate("r")
        .skipLocked(),
    )
    .deleteFrom("runs")
    .where((eb) => eb.or([eb("id", "in", eb.selectFrom("expired").select("id")), eb("parent_run_id", "in", eb.selectFrom("expired").select("id"))]))
    .returning("file_id")
    .execute();
  return { runs: rows.length, fileIds: [...new Set(rows.map((row) => row.file_id))] };
}
