import { type Kysely, sql } from "kysely";

// Queued runs are notified by the service after its commit (src/data/db/run-notifications.ts), no longer by a
// trigger inside the inserting transaction: PostgreSQL serializes notifying commits, so the trigger
// made concurrent submissions commit one at a time.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_notify_queued on runs`.execute(db);
  await sql`drop function docpipe_notify_run_queued()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
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
