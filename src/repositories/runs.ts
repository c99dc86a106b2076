import { type Kysely, type Selectable, sql } from "kysely";
import { prepared } from "../db/connection.ts";
import type { Database, RunStatus, RunStepTable } from "../db/schema.ts";
import { newId } from "../services/ids.ts";

type Db = Kysely<Database>;

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
}

export type RunStepRow = Selectable<RunStepTable>;

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
}

export interface RunFilter {
  organizationId: string;
  workspaceId?: string;
  pipeId?: string;
  status?: RunStatus;
  createTimeAfter?: Date;
  createTimeBefore?: Date;
}

/** The statuses a run can still be cancelled from. */
const UNFINISHED: RunStatus[] = ["queued", "running"];

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
    ]);
}

export type QueuedRunResult =
  | { outcome: "created"; run: RunRow }
  | { outcome: "pipe_not_found" | "pipeline_version_not_found" | "api_key_not_found" };

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
      insert into runs (id, organization_id, workspace_id, pipe_id, pipeline_version, file_id, api_key_id, status, create_time)
      select ${runId}::uuid, ${run.organizationId}::uuid, pipe.workspace_id, ${run.pipeId}::uuid, ${run.pipelineVersion},
        new_file.id, ${run.apiKeyId}::uuid, 'queued', ${run.createTime}
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
    },
  };
}

/** The run of the organization with its file, or undefined. */
export async function findRun(db: Db, organizationId: string, runId: string): Promise<RunRow | undefined> {
  return selectRuns(db).where("runs.id", "=", runId).where("runs.organization_id", "=", organizationId).executeTakeFirst();
}

/** The steps of a run, in pipeline order. */
export async function listRunSteps(db: Db, runId: string): Promise<RunStepRow[]> {
  return db.selectFrom("run_steps").selectAll().where("run_id", "=", runId).orderBy("position").execute();
}

/** Up to `limit` runs matching `filter`, newest first, after the run id `afterId` (keyset paging). */
export async function listRuns(db: Db, filter: RunFilter, afterId: string | undefined, limit: number): Promise<RunRow[]> {
  let query = selectRuns(db).where("runs.organization_id", "=", filter.organizationId);
  if (filter.workspaceId !== undefined) query = query.where("runs.workspace_id", "=", filter.workspaceId);
  if (filter.pipeId !== undefined) query = query.where("runs.pipe_id", "=", filter.pipeId);
  if (filter.status !== undefined) query = query.where("runs.status", "=", filter.status);
  if (filter.createTimeAfter !== undefined) query = query.where("runs.create_time", ">=", filter.createTimeAfter);
  if (filter.createTimeBefore !== undefined) query = query.where("runs.create_time", "<", filter.createTimeBefore);
  if (afterId !== undefined) query = query.where("runs.id", "<", afterId);
  return query.orderBy("runs.id", "desc").limit(limit).execute();
}

/**
 * Cancels the run if it is queued or running, in one statement so a worker finishing it at the same
 * moment cannot be overwritten. Returns whether it was cancelled.
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

export interface IdempotencyClaim {
  organizationId: string;
  key: string;
  pipeId: string;
  now: Date;
  /** A record created before this is free again, whatever it holds. */
  windowStart: Date;
  /** An in-flight record (no run yet) created before this is abandoned and free again. */
  leaseStart: Date;
}

/**
 * Claims the key in one statement: inserts the record, or takes over one that is free again (past its
 * window, or in flight past its lease). The primary key is the arbiter, so concurrent claims from any
 * number of processes get exactly one winner. Returns whether this call holds the key now.
 */
export async function claimIdempotencyKey(db: Db, claim: IdempotencyClaim): Promise<boolean> {
  const claimed = await db
    .insertInto("idempotency_keys")
    .values({ organization_id: claim.organizationId, key: claim.key, pipe_id: claim.pipeId, run_id: null, create_time: claim.now })
    .onConflict((conflict) =>
      conflict
        .columns(["organization_id", "key"])
        .doUpdateSet((eb) => ({ pipe_id: eb.ref("excluded.pipe_id"), run_id: null, create_time: eb.ref("excluded.create_time") }))
        .where((eb) =>
          eb.or([
            eb("idempotency_keys.create_time", "<", claim.windowStart),
            eb.and([eb("idempotency_keys.run_id", "is", null), eb("idempotency_keys.create_time", "<", claim.leaseStart)]),
          ]),
        ),
    )
    .returning("key")
    .executeTakeFirst();
  return claimed !== undefined;
}

/**
 * Marks the key as used up by the run: completes the record while it is in flight (run_id null),
 * re-inserts it when it was released, or takes it over past its window. Returns false when another
 * run already used the key. Call inside the transaction that created the run: the row lock it takes
 * makes a concurrent completion wait, then see the run and fail.
 */
export async function completeIdempotencyKey(
  db: Db,
  record: { organizationId: string; key: string; pipeId: string; runId: string; now: Date; windowStart: Date },
): Promise<boolean> {
  const completed = await db
    .insertInto("idempotency_keys")
    .values({ organization_id: record.organizationId, key: record.key, pipe_id: record.pipeId, run_id: record.runId, create_time: record.now })
    .onConflict((conflict) =>
      conflict
        .columns(["organization_id", "key"])
        // The 24-hour window runs from the successful submission: only a 2xx uses up a key.
        .doUpdateSet((eb) => ({ pipe_id: eb.ref("excluded.pipe_id"), run_id: eb.ref("excluded.run_id"), create_time: eb.ref("excluded.create_time") }))
        .where((eb) => eb.or([eb("idempotency_keys.run_id", "is", null), eb("idempotency_keys.create_time", "<", record.windowStart)])),
    )
    .returning("key")
    .executeTakeFirst();
  return completed !== undefined;
}

/** The key's record (the run that used it, null while in flight), or undefined. */
export async function findIdempotencyKey(db: Db, organizationId: string, key: string): Promise<{ run_id: string | null } | undefined> {
  return db
    .selectFrom("idempotency_keys")
    .select("run_id")
    .where("organization_id", "=", organizationId)
    .where("key", "=", key)
    .executeTakeFirst();
}

/** Deletes the key's record if it is still in flight; a used-up key stays used. */
export async function releaseIdempotencyKey(db: Db, organizationId: string, key: string): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("organization_id", "=", organizationId).where("key", "=", key).where("run_id", "is", null).execute();
}
