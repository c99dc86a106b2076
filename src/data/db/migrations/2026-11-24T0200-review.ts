import { type Kysely, sql } from "kysely";

// Runs can wait for a review (status 'review'), their review step in status 'waiting'. When such a
// run is cancelled, its waiting step is closed like a running one.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table runs drop constraint runs_status_check`.execute(db);
  await sql`alter table runs add constraint runs_status_check
    check (status in ('queued', 'running', 'completed', 'failed', 'cancelled', 'review'))`.execute(db);
  await sql`alter table run_steps drop constraint run_steps_status_check`.execute(db);
  await sql`alter table run_steps add constraint run_steps_status_check check (status in ('running', 'completed', 'failed', 'waiting'))`.execute(db);
  await closeStepsWhenFinished(db, "('running', 'waiting')");
}

export async function down(db: Kysely<any>): Promise<void> {
  await closeStepsWhenFinished(db, "('running')");
  await sql`alter table run_steps drop constraint run_steps_status_check`.execute(db);
  await sql`alter table run_steps add constraint run_steps_status_check check (status in ('running', 'completed', 'failed'))`.execute(db);
  await sql`alter table runs drop constraint runs_status_check`.execute(db);
  await sql`alter table runs add constraint runs_status_check check (status in ('queued', 'running', 'completed', 'failed', 'cancelled'))`.execute(db);
}

/** The trigger function that closes a finished run's open steps: those whose status is in `open` (an SQL list). */
async function closeStepsWhenFinished(db: Kysely<any>, open: string): Promise<void> {
  await sql`
    create or replace function docpipe_run_finished() returns trigger language plpgsql as $$
    begin
      update run_steps set
        status = 'failed',
        end_time = now(),
        error = case when new.status = 'cancelled' then 'the run was cancelled before this step finished'
                     else 'the run ended before this step finished' end
      where run_id = new.id and status in ${sql.raw(open)};
      if new.status = 'cancelled' then
        perform pg_notify('docpipe_run_cancelled', new.id::text);
      end if;
      return null;
    end $$`.execute(db);
}
