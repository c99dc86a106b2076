import { type Kysely, sql } from "kysely";

// Frozen: never edit a migration that has shipped; add a new one.
// Ids are UUIDv7, made by the application: they sort by creation time, so lists page by id.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("plan", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("workspaces")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("is_default", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("update_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("delete_time", "timestamptz")
    .execute();
  await db.schema.createIndex("workspaces_organization_idx").on("workspaces").columns(["organization_id", "id"]).execute();
  await db.schema
    .createIndex("workspaces_one_default_idx")
    .on("workspaces")
    .column("organization_id")
    .unique()
    .where(sql.ref("is_default"), "=", true)
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("digest", "bytea", (col) => col.notNull().unique())
    .addColumn("hint", "text", (col) => col.notNull())
    .addColumn("permissions", sql`text[]`, (col) => col.notNull())
    .addColumn("state", "text", (col) => col.notNull().check(sql`state in ('active', 'deactivated')`))
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("expire_time", "timestamptz")
    .addColumn("last_used_time", "timestamptz")
    .addColumn("deactivate_time", "timestamptz")
    .execute();
  await db.schema.createIndex("api_keys_organization_idx").on("api_keys").columns(["organization_id", "id"]).execute();

  await db.schema
    .createTable("pipes")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("workspace_id", "uuid", (col) => col.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("description", "text", (col) => col.notNull().defaultTo(""))
    .addColumn("state", "text", (col) => col.notNull().check(sql`state in ('active', 'paused')`))
    .addColumn("pipeline_version", "integer", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("update_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("delete_time", "timestamptz")
    .execute();
  await db.schema.createIndex("pipes_organization_idx").on("pipes").columns(["organization_id", "id"]).execute();

  await db.schema
    .createTable("pipeline_versions")
    .addColumn("pipe_id", "uuid", (col) => col.notNull().references("pipes.id").onDelete("cascade"))
    .addColumn("version", "integer", (col) => col.notNull())
    .addColumn("pipeline", "jsonb", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("pipeline_versions_pk", ["pipe_id", "version"])
    .execute();

  await db.schema
    .createTable("files")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("name", "text", (col) => col.notNull())
    .addColumn("content_type", "text", (col) => col.notNull())
    .addColumn("format", "text", (col) => col.notNull())
    .addColumn("size", "bigint", (col) => col.notNull())
    .addColumn("sha256", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("files_sha256_idx").on("files").column("sha256").execute();

  await db.schema
    .createTable("runs")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("workspace_id", "uuid", (col) => col.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("pipe_id", "uuid", (col) => col.notNull().references("pipes.id").onDelete("cascade"))
    .addColumn("pipeline_version", "integer", (col) => col.notNull())
    .addColumn("file_id", "uuid", (col) => col.notNull().references("files.id"))
    .addColumn("api_key_id", "uuid", (col) => col.references("api_keys.id").onDelete("set null"))
    .addColumn("status", "text", (col) => col.notNull().check(sql`status in ('queued', 'running', 'completed', 'failed', 'cancelled')`))
    .addColumn("error", "text", (col) => col.notNull().defaultTo(""))
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("start_time", "timestamptz")
    .addColumn("end_time", "timestamptz")
    .addColumn("attempts", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("lease_owner", "text")
    .addColumn("lease_expire_time", "timestamptz")
    .execute();
  await db.schema.createIndex("runs_organization_idx").on("runs").columns(["organization_id", "id"]).execute();
  await db.schema.createIndex("runs_pending_idx").on("runs").columns(["status", "create_time"]).where(sql.ref("status"), "in", ["queued", "running"]).execute();

  await db.schema
    .createTable("run_steps")
    .addColumn("run_id", "uuid", (col) => col.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("position", "integer", (col) => col.notNull())
    .addColumn("node_id", "text", (col) => col.notNull())
    .addColumn("node_type", "text", (col) => col.notNull())
    .addColumn("status", "text", (col) => col.notNull().check(sql`status in ('running', 'completed', 'failed')`))
    .addColumn("start_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("end_time", "timestamptz")
    .addColumn("output", "jsonb")
    .addColumn("error", "text", (col) => col.notNull().defaultTo(""))
    .addPrimaryKeyConstraint("run_steps_pk", ["run_id", "position"])
    .execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("key", "text", (col) => col.notNull())
    .addColumn("pipe_id", "uuid", (col) => col.notNull())
    .addColumn("run_id", "uuid", (col) => col.references("runs.id").onDelete("cascade"))
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["organization_id", "key"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["idempotency_keys", "run_steps", "runs", "files", "pipeline_versions", "pipes", "api_keys", "workspaces", "organizations"]) {
    await db.schema.dropTable(table).execute();
  }
}
