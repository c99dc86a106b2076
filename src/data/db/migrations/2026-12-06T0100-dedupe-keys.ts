import { type Kysely, sql } from "kysely";

// The keys dedupe nodes saw, one row per pipe and key (its SHA-256, so no document text is kept):
// the run that gave it and when. A key older than a node's days is taken over by the next run that
// gives it. Deleting a pipe deletes its keys; no foreign key to the run, which retention may delete
// while the key is still remembered.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("dedupe_keys")
    .addColumn("pipe_id", "uuid", (column) => column.notNull().references("pipes.id").onDelete("cascade"))
    .addColumn("key_hash", "text", (column) => column.notNull())
    .addColumn("run_id", "uuid", (column) => column.notNull())
    .addColumn("seen_time", "timestamptz", (column) => column.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("dedupe_keys_pkey", ["pipe_id", "key_hash"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("dedupe_keys").execute();
}
