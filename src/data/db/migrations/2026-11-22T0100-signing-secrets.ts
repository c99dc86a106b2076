import { type Kysely, sql } from "kysely";

// Frozen: never edit a migration that has shipped; add a new one.

export async function up(db: Kysely<any>): Promise<void> {
  // Callback signing secrets: encrypted at rest (AES-256-GCM), since signing needs the value itself.
  // A row without expire_time is the organization's current secret; a rotated-out one keeps signing
  // until its expire_time.
  await db.schema
    .createTable("signing_secrets")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("ciphertext", "bytea", (col) => col.notNull())
    .addColumn("hint", "text", (col) => col.notNull())
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("expire_time", "timestamptz")
    .execute();
  await db.schema.createIndex("signing_secrets_organization_idx").on("signing_secrets").columns(["organization_id", "id"]).execute();
  await db.schema
    .createIndex("signing_secrets_one_current_idx")
    .on("signing_secrets")
    .column("organization_id")
    .unique()
    .where(sql.ref("expire_time"), "is", null)
    .execute();

  // Wakes idle workers (LISTEN docpipe_runs) the moment a run becomes queued; polling is the fallback.
  await sql`
    create function docpipe_notify_run_queued() returns trigger language plpgsql as $$
    begin
      perform pg_notify('docpipe_runs', '');
      return null;
    end $$`.execute(db);
  await sql`
    create trigger runs_notify_queued after insert or update of status on runs
    for each row when (new.status = 'queued') execute function docpipe_notify_run_queued()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_notify_queued on runs`.execute(db);
  await sql`drop function docpipe_notify_run_queued()`.execute(db);
  await db.schema.dropTable("signing_secrets").execute();
}
