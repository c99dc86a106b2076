import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Kysely, type Selectable, sql } from "kysely";
import { type EmailTrigger, EmailTriggerSchema, type HttpTrigger, HttpTriggerSchema, type Pipeline, PipelineSchema } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { Database, PipeState, PipeTable } from "../db/schema.ts";
import { prepared } from "../db/connection.ts";

/** A live pipe row with its current pipeline, decoded. */
export type PipeRecord = Omit<Selectable<PipeTable>, "delete_time"> & { pipeline: Pipeline };

export interface PipelineVersionRecord {
  pipe_id: string;
  version: number;
  pipeline: Pipeline;
  create_time: Date;
}

export interface NewPipe {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: string;
  pipeline: Pipeline;
  test_mode: boolean;
  retention_days: number;
  now: Date;
}

export interface PipeChanges {
  name?: string | undefined;
  description?: string | undefined;
  /** Saved as the version after the current one. */
  pipeline?: Pipeline | undefined;
  state?: PipeState | undefined;
  test_mode?: boolean | undefined;
  retention_days?: number | undefined;
}

export interface PipeListFilter {
  organizationId: string;
  workspaceId: string | undefined;
  state: PipeState | undefined;
}

export interface ResolvedTrigger {
  workspaceId: string;
  /** Undefined when the workspace exists but holds no active pipe with that id and an HTTP trigger. */
  pipe: { id: string; pipelineVersion: number; trigger: HttpTrigger } | undefined;
}

/** Stored as proto JSON so the column stays readable in SQL (and ResolveTrigger can pick the trigger out). */
function encodePipeline(pipeline: Pipeline): string {
  return JSON.stringify(toJson(PipelineSchema, pipeline));
}

/** A stored pipeline. Unknown fields are ignored so a version written by a newer release still reads after a rollback. */
export function decodePipeline(json: unknown): Pipeline {
  return fromJson(PipelineSchema, json as JsonValue, { ignoreUnknownFields: true });
}

/** A stored pipeline's first-node HTTP trigger, picked out in SQL; unknown fields are ignored as in decodePipeline. */
function decodeTrigger(json: unknown): HttpTrigger {
  return fromJson(HttpTriggerSchema, json as JsonValue, { ignoreUnknownFields: true });
}

/** Pipes that are neither deleted nor in a deleted workspace, with their current pipeline. */
function livePipes(db: Kysely<Database>, organizationId: string) {
  return db
    .selectFrom("pipes as p")
    .innerJoin("workspaces as w", (join) => join.onRef("w.id", "=", "p.workspace_id").on("w.delete_time", "is", null))
    .innerJoin("pipeline_versions as v", (join) => join.onRef("v.pipe_id", "=", "p.id").onRef("v.version", "=", "p.pipeline_version"))
    .select([
      "p.id",
      "p.organization_id",
      "p.workspace_id",
      "p.name",
      "p.description",
      "p.state",
      "p.pipeline_version",
      "p.create_time",
      "p.update_time",
      "p.test_mode",
      "p.retention_days",
      "v.pipeline",
    ])
    .where("p.organization_id", "=", organizationId)
    .where("p.delete_time", "is", null);
}

function toRecord<T extends { pipeline: unknown }>(row: T): T & { pipeline: Pipeline } {
  return { ...row, pipeline: decodePipeline(row.pipeline) };
}

/**
 * One live pipe of the organization. `lock` first takes a row lock on the pipe for the rest of the
 * transaction, in a statement of its own: were the lock taken by the joined read, a concurrent save's
 * new version would fail the join's recheck and the pipe would look missing.
 */
export async function findPipe(
  db: Kysely<Database>,
  organizationId: string,
  pipeId: string,
  options: { lock?: boolean } = {},
): Promise<PipeRecord | undefined> {
  if (options.lock === true) {
    const locked = await livePipeId(db, organizationId, pipeId).forUpdate().executeTakeFirst();
    if (locked === undefined) return undefined;
  }
  const row = await livePipes(db, organizationId).where("p.id", "=", pipeId).executeTakeFirst();
  return row === undefined ? undefined : toRecord(row);
}

/** Inserts a paused pipe and version 1 of its pipeline; run it in a transaction so neither exists without the other. */
export async function insertPipe(db: Kysely<Database>, pipe: NewPipe): Promise<PipeRecord> {
  const row = await db
    .insertInto("pipes")
    .values({
      id: pipe.id,
      organization_id: pipe.organization_id,
      workspace_id: pipe.workspace_id,
      name: pipe.name,
      description: pipe.description,
      state: "paused",
      test_mode: pipe.test_mode,
      retention_days: pipe.retention_days,
      pipeline_version: 1,
      create_time: pipe.now,
      update_time: pipe.now,
    })
    .returning([
      "id",
      "organization_id",
      "workspace_id",
      "name",
      "description",
      "state",
      "pipeline_version",
      "create_time",
      "update_time",
      "test_mode",
      "retention_days",
    ])
    .executeTakeFirstOrThrow();
  await insertPipelineVersion(db, pipe.id, 1, pipe.pipeline, pipe.now);
  return { ...row, pipeline: pipe.pipeline };
}

async function insertPipelineVersion(db: Kysely<Database>, pipeId: string, version: number, pipeline: Pipeline, now: Date): Promise<void> {
  await db
    .insertInto("pipeline_versions")
    .values({ pipe_id: pipeId, version, pipeline: encodePipeline(pipeline), create_time: now })
    .execute();
}

/**
 * Applies `changes` to a pipe found with findPipe(..., { lock: true }) in the same transaction: the row
 * lock makes concurrent saves take turns, and the (pipe_id, version) key refuses a duplicate version anyway.
 */
export async function updatePipe(db: Kysely<Database>, current: PipeRecord, changes: PipeChanges, now: Date): Promise<PipeRecord> {
  const updated: PipeRecord = {
    ...current,
    name: changes.name ?? current.name,
    description: changes.description ?? current.description,
    state: changes.state ?? current.state,
    test_mode: changes.test_mode ?? current.test_mode,
    retention_days: changes.retention_days ?? current.retention_days,
    pipeline: changes.pipeline ?? current.pipeline,
    pipeline_version: changes.pipeline === undefined ? current.pipeline_version : current.pipeline_version + 1,
    update_time: now,
  };
  if (changes.pipeline !== undefined) await insertPipelineVersion(db, current.id, updated.pipeline_version, updated.pipeline, now);
  await db
    .updateTable("pipes")
    .set({
      name: updated.name,
      description: updated.description,
      state: updated.state,
      test_mode: updated.test_mode,
      retention_days: updated.retention_days,
      pipeline_version: updated.pipeline_version,
      update_time: now,
    })
    .where("id", "=", current.id)
    .execute();
  return updated;
}

/** One saved version of a live pipe, telling a missing pipe (pipeFound false) from a missing version. */
export async function findPipelineVersion(
  db: Kysely<Database>,
  organizationId: string,
  pipeId: string,
  version: number,
): Promise<{ pipeFound: boolean; version: PipelineVersionRecord | undefined }> {
  const row = await db
    .selectFrom("pipes as p")
    .innerJoin("workspaces as w", (join) => join.onRef("w.id", "=", "p.workspace_id").on("w.delete_time", "is", null))
    .leftJoin("pipeline_versions as v", (join) => join.onRef("v.pipe_id", "=", "p.id").on("v.version", "=", version))
    .select(["p.id", "v.version", "v.pipeline", "v.create_time"])
    .where("p.organization_id", "=", organizationId)
    .where("p.id", "=", pipeId)
    .where("p.delete_time", "is", null)
    .executeTakeFirst();
  if (row === undefined) return { pipeFound: false, version: undefined };
  if (row.version === null || row.create_time === null) return { pipeFound: true, version: undefined };
  return { pipeFound: true, version: { pipe_id: row.id, version: row.version, pipeline: decodePipeline(row.pipeline), create_time: row.create_time } };
}

/**
 * The saved versions of a live pipe's pipeline, newest first, those below version `before` when it
 * is given; undefined when there is no such pipe (as findPipelineVersion decides it).
 */
export async function listPipelineVersions(
  db: Kysely<Database>,
  organizationId: string,
  pipeId: string,
  before: number | undefined,
  limit: number,
): Promise<PipelineVersionRecord[] | undefined> {
  const rows = await db
    .selectFrom("pipes as p")
    .innerJoin("workspaces as w", (join) => join.onRef("w.id", "=", "p.workspace_id").on("w.delete_time", "is", null))
    .leftJoin("pipeline_versions as v", (join) =>
      join.onRef("v.pipe_id", "=", "p.id").$call((on) => (before === undefined ? on : on.on("v.version", "<", before))),
    )
    .select(["p.id", "v.version", "v.pipeline", "v.create_time"])
    .where("p.organization_id", "=", organizationId)
    .where("p.id", "=", pipeId)
    .where("p.delete_time", "is", null)
    .orderBy("v.version", "desc")
    .limit(limit)
    .execute();
  if (rows.length === 0) return undefined;
  return rows.flatMap((row) =>
    row.version === null || row.create_time === null
      ? []
      : [{ pipe_id: row.id, version: row.version, pipeline: decodePipeline(row.pipeline), create_time: row.create_time }],
  );
}

/** One saved version's pipeline as stored (proto JSON), whatever became of its pipe since: what a run executes. */
export async function findStoredPipeline(
  db: Kysely<Database>,
  pipeId: string,
  version: number,
): Promise<{ pipeline: unknown; test_mode: boolean } | undefined> {
  return db
    .selectFrom("pipeline_versions as v")
    .innerJoin("pipes as p", "p.id", "v.pipe_id")
    .select(["v.pipeline", "p.test_mode"])
    .where("v.pipe_id", "=", pipeId)
    .where("v.version", "=", version)
    .executeTakeFirst();
}

/** Whether a pipe (deleted or not) is in test mode; undefined when there is no such pipe. */
export async function findPipeTestMode(db: Kysely<Database>, pipeId: string): Promise<boolean | undefined> {
  const row = await db.selectFrom("pipes").select("test_mode").where("id", "=", pipeId).modifyEnd(prepared("pipe_test_mode")).executeTakeFirst();
  return row?.test_mode;
}

/** Live pipes newest first (UUIDv7 ids sort by creation), after the id `after`; fetch page size + 1 to know if more follow. */
export async function listPipes(db: Kysely<Database>, filter: PipeListFilter, after: string | undefined, limit: number): Promise<PipeRecord[]> {
  const rows = await livePipes(db, filter.organizationId)
    .$if(filter.workspaceId !== undefined, (query) => query.where("p.workspace_id", "=", filter.workspaceId!))
    .$if(filter.state !== undefined, (query) => query.where("p.state", "=", filter.state!))
    .$if(after !== undefined, (query) => query.where("p.id", "<", after!))
    .orderBy("p.id", "desc")
    .limit(limit)
    .execute();
  return rows.map(toRecord);
}

/** Marks a live pipe deleted; false when there was none. */
export async function softDeletePipe(db: Kysely<Database>, organizationId: string, pipeId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable("pipes")
    .set({ delete_time: now, update_time: now })
    .where("organization_id", "=", organizationId)
    .where("id", "=", pipeId)
    .where("delete_time", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The edge's hot path, one round trip over primary keys (and the one-default-workspace index): the
 * workspace row decides workspace_not_found, the joined pipe and its current version the rest. Only the
 * first node's trigger leaves the database, not the whole pipeline.
 */
export async function resolveTrigger(
  db: Kysely<Database>,
  organizationId: string,
  workspaceId: string | undefined,
  pipeId: string,
): Promise<ResolvedTrigger | undefined> {
  const row = await db
    .selectFrom("workspaces as w")
    .leftJoin("pipes as p", (join) =>
      join
        .onRef("p.workspace_id", "=", "w.id")
        .on("p.id", "=", pipeId)
        .on("p.organization_id", "=", organizationId)
        .on("p.state", "=", "active")
        .on("p.delete_time", "is", null),
    )
    .leftJoin("pipeline_versions as v", (join) => join.onRef("v.pipe_id", "=", "p.id").onRef("v.version", "=", "p.pipeline_version"))
    .select(["w.id as workspace_id", "p.id as pipe_id", "p.pipeline_version", sql<unknown>`v.pipeline -> 'nodes' -> 0 -> 'httpTrigger'`.as("trigger")])
    .where("w.organization_id", "=", organizationId)
    .where("w.delete_time", "is", null)
    .where((eb) => (workspaceId === undefined ? eb("w.is_default", "=", true) : eb("w.id", "=", workspaceId)))
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const found = row.pipe_id !== null && row.pipeline_version !== null && row.trigger !== null;
  return {
    workspaceId: row.workspace_id,
    pipe: found ? { id: row.pipe_id!, pipelineVersion: row.pipeline_version!, trigger: decodeTrigger(row.trigger) } : undefined,
  };
}

/**
 * The allowed origins of an active pipe's HTTP trigger, by pipe id alone (CORS preflights carry no
 * key), or undefined when no such trigger exists.
 */
export async function findTriggerOrigins(db: Kysely<Database>, pipeId: string): Promise<string[] | undefined> {
  const row = await db
    .selectFrom("pipes as p")
    .innerJoin("workspaces as w", "w.id", "p.workspace_id")
    .innerJoin("pipeline_versions as v", (join) => join.onRef("v.pipe_id", "=", "p.id").onRef("v.version", "=", "p.pipeline_version"))
    .select(sql<unknown>`v.pipeline -> 'nodes' -> 0 -> 'httpTrigger'`.as("trigger"))
    .where("p.id", "=", pipeId)
    .where("p.state", "=", "active")
    .where("p.delete_time", "is", null)
    .where("w.delete_time", "is", null)
    .executeTakeFirst();
  if (row === undefined || row.trigger === null) return undefined;
  return decodeTrigger(row.trigger).allowedOrigins;
}

/** An active pipe's email trigger with what creating its runs needs. */
export interface ResolvedEmailTrigger {
  organizationId: string;
  workspaceId: string;
  pipeId: string;
  pipelineVersion: number;
  trigger: EmailTrigger;
  /** The organization's plan, whose limit counts the runs its messages make. */
  plan: string;
}

/**
 * The email trigger of an active pipe, by pipe id alone (mail carries no key: the address names the
 * pipe), or undefined when the pipe is unknown, paused, deleted or has no email trigger.
 */
export async function findEmailTrigger(db: Kysely<Database>, pipeId: string): Promise<ResolvedEmailTrigger | undefined> {
  const row = await db
    .selectFrom("pipes as p")
    .innerJoin("workspaces as w", "w.id", "p.workspace_id")
    .innerJoin("pipeline_versions as v", (join) => join.onRef("v.pipe_id", "=", "p.id").onRef("v.version", "=", "p.pipeline_version"))
    .innerJoin("organizations as o", "o.id", "p.organization_id")
    .select([
      "p.organization_id",
      "p.workspace_id",
      "p.pipeline_version",
      "o.plan",
      sql<unknown>`jsonb_path_query_first(v.pipeline, '$.nodes[*].emailTrigger')`.as("trigger"),
    ])
    .where("p.id", "=", pipeId)
    .where("p.state", "=", "active")
    .where("p.delete_time", "is", null)
    .where("w.delete_time", "is", null)
    .executeTakeFirst();
  if (row === undefined || row.trigger === null) return undefined;
  return {
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    pipeId,
    pipelineVersion: row.pipeline_version,
    trigger: fromJson(EmailTriggerSchema, row.trigger as JsonValue, { ignoreUnknownFields: true }),
    plan: row.plan,
  };
}

/** Whether the pipe exists in the organization and is not deleted. */
export async function pipeExists(db: Kysely<Database>, organizationId: string, pipeId: string): Promise<boolean> {
  return (await livePipeId(db, organizationId, pipeId).executeTakeFirst()) !== undefined;
}

/** The id of the organization's pipe when it is not deleted: a query to run, or to lock with. */
function livePipeId(db: Kysely<Database>, organizationId: string, pipeId: string) {
  return db.selectFrom("pipes").select("id").where("organization_id", "=", organizationId).where("id", "=", pipeId).where("delete_time", "is", null);
}

/**
 * Pipeline versions holding a callback header value that does not start with `sealedPrefix`:
 * values stored before header sealing began. Versions are few per pipe and only these are read.
 */
export async function pipelineVersionsWithUnsealedHeaders(db: Kysely<Database>, sealedPrefix: string) {
  const rows = await db
    .selectFrom("pipeline_versions as v")
    .innerJoin("pipes as p", "p.id", "v.pipe_id")
    .select(["v.pipe_id", "v.version", "v.pipeline", "p.organization_id"])
    .where(
      sql<boolean>`jsonb_path_exists(v.pipeline, '$.nodes[*].callback.headers.* ? (!(@ starts with $prefix))', jsonb_build_object('prefix', ${sealedPrefix}::text))`,
    )
    .execute();
  return rows.map((row) => ({ ...row, pipeline: decodePipeline(row.pipeline) }));
}

/** Rewrites a stored version with the same meaning in another form (its callback headers sealed). */
export async function rewritePipelineVersion(db: Kysely<Database>, pipeId: string, version: number, pipeline: Pipeline): Promise<void> {
  await db
    .updateTable("pipeline_versions")
    .set({ pipeline: encodePipeline(pipeline) })
    .where("pipe_id", "=", pipeId)
    .where("version", "=", version)
    .execute();
}
