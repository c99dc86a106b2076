import type { Kysely } from "kysely";

// Pipe.retention_days: runs older than that are deleted by the worker's retention sweeper. Deleting a
// file row checks that no run names it, so runs.file_id gets the index that check (and the foreign
// key's own check) needs.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("pipes")
    .addColumn("retention_days", "integer", (col) => col.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("runs_file_idx").on("runs").column("file_id").execute();
  await db.schema.createIndex("runs_pipe_create_time_idx").on("runs").columns(["pipe_id", "create_time"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("runs_pipe_create_time_idx").execute();
  await db.schema.dropIndex("runs_file_idx").execute();
  await db.schema.alterTable("pipes").dropColumn("retention_days").execute();
}
