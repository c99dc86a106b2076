import { type Kysely, sql } from "kysely";

// When a run reaches a final status:
// - the step it left running is closed (its worker was stopped by a cancellation, lost its lease, or
//   the run was failed after too many attempts): a finished run never shows a step as running;
// - a cancellation is notified on docpipe_run_cancelled (payload: the run id), so the worker holding
//   the run aborts its step at once instead of at its next lease renewal.
// One trigger covers every path that finishes a run. Submissions only insert: they never fire it.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function docpipe_run_finished() returns trigger language plpgsql as $$
    begin
      update run_steps set
        status = 'failed',
        end_time = now(),
        error = case when new.status = 'cancelled' then 'the run was cancelled before this step finished'
                     else 'the run ended before this step finished' end
      where run_id = new.id and status = 'running';
      if new.status = 'cancelled' then
        perform pg_notify('docpipe_run_cancelled', new.id::text);
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger runs_finished after update of status on runs
    for each row when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
    execute function docpipe_run_finished()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_finished on runs`.execute(db);
  await sql`drop function docpipe_run_finished()`.execute(db);
}
