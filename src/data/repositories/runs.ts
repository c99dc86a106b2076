import { CompiledQuery, sql } from "kysely";
import { preparedText } from "../db/connection.ts";
import { inTransaction } from "../db/transaction.ts";
import { storableJson } from "../db/storable.ts";
import type { Db, RunEmail, RunStatus } from "../db/schema.ts";
import { newId } from "../../platform/ids.ts";

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
  /** A document sent from the console to try the pipe (see TestRuns): a paused pipe takes it too. */
  tryingPipe?: boolean;
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

/** insertQueuedRuns's statement: $1-$14 are one array per column, in the order of the input's columns. */
const INSERT_QUEUED_RUNS = preparedText(
  "insert_queued_runs",
  `with input as (
  select * from unnest(
    $1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::integer[], $6::uuid[], $7::text[], $8::text[], $9::text[],
    $10::bigint[], $11::text[], $12::timestamptz[], $13::text[], $14::jsonb[], $15::boolean[]
  ) with ordinality as input (file_id, run_id, organization_id, pipe_id, pipeline_version, api_key_id, name, content_type, format, size, sha256,
    create_time, trace_parent, email, trying_pipe, position)
),
checked as (
  select input.*, p.workspace_id,
    exists (select 1 from pipeline_versions v where v.pipe_id = p.id and v.version = input.pipeline_version) as has_version,
    (input.api_key_id is null or exists (
      select 1 from api_keys k where k.id = input.api_key_id and k.organization_id = p.organization_id)) as has_api_key
  from input join pipes p on p.id = input.pipe_id and p.organization_id = input.organization_id and p.delete_time is null
    and (p.state = 'active' or input.trying_pipe)
),
new_files as (
  insert into files (id, organization_id, name, content_type, format, size, sha256, create_time)
  select file_id, organization_id, name, content_type, format, size, sha256, create_time
  from checked where has_version and has_api_key
  returning id
),
new_runs as (
  insert into runs (id, organization_id, workspace_id, pipe_id, pipeline_version, file_id, api_key_id, status, create_time, trace_parent, email)
  select checked.run_id, checked.organization_id, checked.workspace_id, checked.pipe_id, checked.pipeline_version, new_files.id,
    checked.api_key_id, 'queued', checked.create_time, checked.trace_parent, checked.email
  from checked join new_files on new_files.id = checked.file_id
  returning id
)
select position, workspace_id, has_version, has_api_key from checked`,
);

/**
 * Checks each run's pipe (same organization, active unless the run is one trying it, not deleted, the pipeline version exists, the
 * API key is the organization's) and inserts the file rows and queued runs that pass, in one
 * statement: one round trip and one commit for many submissions, atomic without an explicit
 * transaction. Checking "active" here, at the moment of insertion, is what makes a pause or delete
 * exact whatever the edge had resolved before. The rows go as one array per column, so the
 * statement's text is the same for any number of runs: written out once and prepared once per
 * connection (see preparedText), as it runs for every submission. Returns one result per run, in order.
 */
export async function insertQueuedRuns(db: Db, newRuns: readonly NewRun[]): Promise<QueuedRunResult[]> {
  const ids = newRuns.map(() => ({ fileId: newId(), runId: newId() }));
  const column = <T>(value: (run: NewRun) => T) => newRuns.map(value);
  const { rows } = await db.executeQuery<{ position: string; workspace_id: string; has_version: boolean; has_api_key: boolean }>(
    CompiledQuery.raw(INSERT_QUEUED_RUNS, [
      ids.map(({ fileId }) => fileId),
      ids.map(({ runId }) => runId),
      column((run) => run.organizationId),
      column((run) => run.pipeId),
      column((run) => run.pipelineVersion),
      column((run) => run.apiKeyId),
      column((run) => run.file.name),
      column((run) => run.file.contentType),
      column((run) => run.file.format),
      column((run) => run.file.size.toString()),
      column((run) => run.file.sha256),
      // ISO 8601 in UTC: one string per time, where pg's own conversion builds one from a dozen pieces.
      column((run) => run.createTime.toISOString()),
      column((run) => run.traceParent ?? null),
      column((run) => (run.email == null ? null : storableJson(run.email))),
      column((run) => run.tryingPipe === true),
    ]),
  );
  const checked = new Map(rows.map((row) => [Number(row.position) - 1, row]));
  return newRuns.map((run, index): QueuedRunResult => {
    const pipe = checked.get(index);
    if (pipe === undefined) return { outcome: "pipe_not_found" };
    if (!pipe.has_version) return { outcome: "pipeline_version_not_found" };
    if (!pipe.has_api_key) return { outcome: "api_key_not_found" };
    const { file } = run;
    const { fileId, runId } = ids[index]!;
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
  });
}

/** A step a rerun reuses from the run it reruns, at its position in the current pipeline. */
export interface ReusedStep {
  position: number;
  nodeId: string;
  nodeType: string;
  output: string;
  /** The step's times in the run that executed it. */
  startTime: Date;
  endTime: Date | null;
  /** The run that executed it: the run reran, or the run that one copied it from. */
  copiedFromRunId: string;
}

/**
 * Queues a new run of the source run's file with its pipe's current pipeline version, recording
 * the run it reran, with the steps it reuses already completed (with the times they ran at and the
 * run that executed them); run it in a transaction. Undefined
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
          start_time: step.startTime,
          end_time: step.endTime,
          output: step.output,
          copied_from_run_id: step.copiedFromRunId,
        })),
      )
      .execute();
  }
  return runId;
}

/**
 * The organization's runs queued or running, counted up to `upTo` (a count past a cap need not be
 * exact): read from the pending runs' index, so a full queue costs at most `upTo` index entries.
 */
export async function countPendingRuns(db: Db, organizationId: string, upTo: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom("runs")
        .select(sql<number>`1`.as("one"))
        .where("organization_id", "=", organizationId)
        .where("status", "in", ["queued", "running"])
        .limit(upTo)
        .as("pending"),
    )
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The run of the organization with its file, or undefined. */
export async function findRun(db: Db, organizationId: string, runId: string): Promise<RunRow | undefined> {
  return selectRuns(db).where("runs.id", "=", runId).where("runs.organization_id", "=", organizationId).executeTakeFirst();
}

/** Which message of a sender to a pipe: its Message-ID. */
export interface EmailMessageKey {
  pipeId: string;
  sender: string;
  messageId: string;
}

/**
 * Holds, until the transaction ends, the right to record the runs of this message: a second copy of
 * it taken at the same moment waits, then finds the runs the first made (findRunsOfEmailMessage).
 */
export async function lockEmailMessage(db: Db, message: EmailMessageKey): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`email/${message.pipeId}/${message.sender}/${message.messageId}`}, 0))`.execute(db);
}

/** The runs a message made (one per accepted attachment, in their order) since `since`: none when it is new. */
export async function findRunsOfEmailMessage(db: Db, message: EmailMessageKey, since: Date): Promise<RunRow[]> {
  return selectRuns(db)
    .where("runs.pipe_id", "=", message.pipeId)
    .where(sql<boolean>`runs.email is not null and runs.email ->> 'messageId' = ${message.messageId} and runs.email ->> 'sender' = ${message.sender}`)
    .where("runs.create_time", ">=", since)
    .orderBy("runs.id")
    .execute();
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
 * Cancels the run if it has not ended, by an update that checks it has not (a worker finishing it at
 * the same moment cannot be overwritten); its unfinished child runs are cancelled with it (the
 * runs_family trigger). In the same transaction its unfinished descendants are locked first,
 * deepest first: a part that ends locks itself, then its parent (the same trigger), and a cancel
 * that locked the parent first, then the parts, would deadlock with it (PostgreSQL would fail one of
 * the two). Returns whether it was cancelled.
 */
export async function cancelUnfinishedRun(db: Db, organizationId: string, runId: string, endTime: Date): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    await sql`
      with recursive family (id, depth) as (
        select id, 1 from runs where parent_run_id = ${runId}::uuid and organization_id = ${organizationId}::uuid
        union all
        select r.id, f.depth + 1 from runs r join family f on r.parent_run_id = f.id
      )
      select runs.id from runs join family on family.id = runs.id
      where runs.status = any(${UNFINISHED}::text[])
      order by family.depth desc, runs.id
      for update of runs`.execute(trx);
    return cancelRunRow(trx, organizationId, runId, endTime);
  });
}

/** The run's cancel itself (see cancelUnfinishedRun). */
async function cancelRunRow(db: Db, organizationId: string, runId: string, endTime: Date): Promise<boolean> {
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
