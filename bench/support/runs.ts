import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Kysely } from "kysely";
import { notifyRunsQueued } from "../../src/db/run-notifications.ts";
import type { Database, RunStatus } from "../../src/db/schema.ts";
import { newId } from "../../src/ids.ts";
import type { FileStore } from "../../src/storage/file-store.ts";

// Runs written straight into the database, so a run benchmark measures the workers and not the
// submissions that feed them.

/** Whose runs these are: an organization and one of its workspaces. */
export interface Owner {
  organizationId: string;
  workspaceId: string;
}

/** A new organization with its default workspace. */
export async function createOwner(db: Kysely<Database>): Promise<Owner> {
  const owner = { organizationId: newId(), workspaceId: newId() };
  await db.insertInto("organizations").values({ id: owner.organizationId, name: "bench", plan: "free" }).execute();
  await db.insertInto("workspaces").values({ id: owner.workspaceId, organization_id: owner.organizationId, name: "Default", is_default: true }).execute();
  return owner;
}

/** An active pipe whose version 1 is a PDF trigger followed by `nodes` (proto JSON). */
export async function createPipe(db: Kysely<Database>, owner: Owner, nodes: object[]): Promise<string> {
  const pipeId = newId();
  await db
    .insertInto("pipes")
    .values({ id: pipeId, organization_id: owner.organizationId, workspace_id: owner.workspaceId, name: "bench", state: "active", pipeline_version: 1 })
    .execute();
  const pipeline = { nodes: [{ id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } }, ...nodes] };
  await db
    .insertInto("pipeline_versions")
    .values({ pipe_id: pipeId, version: 1, pipeline: JSON.stringify(pipeline) })
    .execute();
  return pipeId;
}

/** Stores `bytes` where the store keeps the owner's documents and records the file row; returns the file id. */
export async function addFile(db: Kysely<Database>, store: FileStore, owner: Owner, name: string, format: string, bytes: Buffer): Promise<string> {
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const path = store.pathOf(owner.organizationId, sha256);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
  const id = newId();
  await db
    .insertInto("files")
    .values({ id, organization_id: owner.organizationId, name, content_type: "application/octet-stream", format, size: bytes.length, sha256 })
    .execute();
  return id;
}

/** Queues `count` runs of the pipe on the file in one statement and wakes the workers, as CreateRun does; returns their ids. */
export async function queueRuns(db: Kysely<Database>, owner: Owner, pipeId: string, fileId: string, count: number): Promise<string[]> {
  const rows = Array.from({ length: count }, () => ({
    id: newId(),
    organization_id: owner.organizationId,
    workspace_id: owner.workspaceId,
    pipe_id: pipeId,
    pipeline_version: 1,
    file_id: fileId,
    status: "queued" as const,
  }));
  await db.insertInto("runs").values(rows).execute();
  await notifyRunsQueued(db);
  return rows.map((row) => row.id);
}

/** Waits until every run is in one of `statuses`; throws after `timeoutMs`. */
export async function waitForRuns(db: Kysely<Database>, runIds: string[], statuses: RunStatus[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const runs = await db.selectFrom("runs").select("status").where("id", "in", runIds).execute();
    if (runs.every((run) => statuses.includes(run.status))) return;
    if (Date.now() > deadline) throw new Error(`runs not ${statuses.join("/")} in time: ${runs.map((run) => run.status).join(",")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
