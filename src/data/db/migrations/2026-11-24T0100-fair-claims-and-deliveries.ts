import { type Kysely, sql } from "kysely";

// Fair claims: a worker slot goes to the organization holding the fewest, so the claim counts each
// organization's running runs and finds its oldest claimable run; this index serves both.
//
// Callback deliveries leave the run: each callback node of a run writes one delivery, sent by its
// own queue (not the worker slots that parse), with its own lease, schedule and recorded attempts.
// A delivery becomes due when its run completes or fails; a cancelled run's pending deliveries are
// cancelled with it (a trigger, so every path that cancels a run is covered).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("runs_pending_organization_idx")
    .on("runs")
    .columns(["organization_id", "create_time"])
    .where(sql.ref("status"), "in", ["queued", "running"])
    .execute();

  await db.schema
    .createTable("callback_deliveries")
    .addColumn("id", "uuid", (col) => col.primaryKey())
    .addColumn("run_id", "uuid", (col) => col.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("organization_id", "uuid", (col) => col.notNull().references("organizations.id").onDelete("cascade"))
    .addColumn("node_id", "text", (col) => col.notNull())
    .addColumn("url", "text", (col) => col.notNull())
    .addColumn("method", "text", (col) => col.notNull())
    // The callback node's headers as the pipeline stores them (values sealed).
    .addColumn("headers", "jsonb", (col) => col.notNull())
    .addColumn("timeout_ms", "integer", (col) => col.notNull())
    // The payload, exactly as every attempt sends it.
    .addColumn("body", "text", (col) => col.notNull())
    .addColumn("status", "text", (col) => col.notNull())
    .addColumn("attempts", "integer", (col) => col.notNull().defaultTo(0))
    // The attempt number after which a failure is final; a redelivery raises it by one.
    .addColumn("last_attempt", "integer", (col) => col.notNull())
    .addColumn("next_attempt_time", "timestamptz")
    .addColumn("lease_owner", "text")
    .addColumn("lease_expire_time", "timestamptz")
    .addColumn("create_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn("update_time", "timestamptz", (col) => col.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("callback_deliveries_run_node_key", ["run_id", "node_id"])
    .execute();
  await db.schema
    .createIndex("callback_deliveries_due_idx")
    .on("callback_deliveries")
    .column("next_attempt_time")
    .where(sql.ref("status"), "=", "pending")
    .execute();

  await db.schema
    .createTable("callback_delivery_attempts")
    .addColumn("delivery_id", "uuid", (col) => col.notNull().references("callback_deliveries.id").onDelete("cascade"))
    .addColumn("number", "integer", (col) => col.notNull())
    .addColumn("start_time", "timestamptz", (col) => col.notNull())
    // Null while the attempt is in flight.
    .addColumn("duration_ms", "integer")
    // The receiver's HTTP status; null when none came (network error, timeout, refusal).
    .addColumn("http_status", "integer")
    .addColumn("error", "text", (col) => col.notNull().defaultTo(""))
    .addColumn("next_attempt_time", "timestamptz")
    .addPrimaryKeyConstraint("callback_delivery_attempts_pkey", ["delivery_id", "number"])
    .execute();

  await sql`
    create function docpipe_run_cancelled_deliveries() returns trigger language plpgsql as $$
    begin
      update callback_deliveries set status = 'cancelled', next_attempt_time = null, update_time = now()
      where run_id = new.id and status = 'pending';
      return null;
    end $$`.execute(db);
  await sql`
    create trigger runs_cancelled_deliveries after update of status on runs
    for each row when (new.status = 'cancelled' and old.status is distinct from new.status)
    execute function docpipe_run_cancelled_deliveries()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_cancelled_deliveries on runs`.execute(db);
  await sql`drop function docpipe_run_cancelled_deliveries()`.execute(db);
  await db.schema.dropTable("callback_delivery_attempts").execute();
  await db.schema.dropTable("callback_deliveries").execute();
  await db.schema.dropIndex("runs_pending_organization_idx").execute();
}
