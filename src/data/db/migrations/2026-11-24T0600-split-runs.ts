import { type Kysely, sql } from "kysely";

// A split node makes one child run per part of its run's document: child runs name their parent,
// their part, and the node they start after (the split). The parent waits in 'awaiting_children'.
//
// One trigger keeps parent and children in step on every path that ends a run (a worker, CancelRun,
// a review's decision): when a parent is cancelled its unfinished children are cancelled with it,
// and when the last child of a waiting parent ends, the parent is queued again, in the same
// transaction, so neither can be lost between two statements. The parent's row is locked first,
// so two children ending at once are counted one after the other: exactly one of them queues it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("runs")
    .addColumn("parent_run_id", "uuid", (col) => col.references("runs.id").onDelete("cascade"))
    .addColumn("part_index", "integer")
    .addColumn("part_label", "text")
    .addColumn("start_node_id", "text")
    .execute();
  await sql`create index runs_parent_idx on runs (parent_run_id) where parent_run_id is not null`.execute(db);
  await sql`alter table runs drop constraint runs_status_check`.execute(db);
  await sql`alter table runs add constraint runs_status_check
    check (status in ('queued', 'running', 'completed', 'failed', 'cancelled', 'review', 'awaiting_children'))`.execute(db);
  await sql`
    create function docpipe_run_family() returns trigger language plpgsql as $$
    begin
      if new.status = 'cancelled' then
        update runs set status = 'cancelled', end_time = now(), lease_owner = null, lease_expire_time = null
        where parent_run_id = new.id and status in ('queued', 'running', 'review', 'awaiting_children');
      end if;
      if new.parent_run_id is not null then
        perform 1 from runs where id = new.parent_run_id and status = 'awaiting_children' for update;
        if found and not exists (
          select 1 from runs where parent_run_id = new.parent_run_id and status not in ('completed', 'failed', 'cancelled')
        ) then
          update runs set status = 'queued', lease_owner = null, lease_expire_time = null where id = new.parent_run_id;
          perform pg_notify('docpipe_runs', '');
        end if;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger runs_family after update of status on runs
    for each row when (new.status in ('completed', 'failed', 'cancelled') and old.status is distinct from new.status)
    execute function docpipe_run_family()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_family on runs`.execute(db);
  await sql`drop function docpipe_run_family()`.execute(db);
  await sql`delete from runs where parent_run_id is not null`.execute(db);
  await sql`update runs set status = 'failed', error = 'split runs are not supported by this version' where status = 'awaiting_children'`.execute(db);
  await sql`alter table runs drop constraint runs_status_check`.execute(db);
  await sql`alter table runs add constraint runs_status_check
    check (status in ('queued', 'running', 'completed', 'failed', 'cancelled', 'review'))`.execute(db);
  await db.schema.alterTable("runs").dropColumn("parent_run_id").dropColumn("part_index").dropColumn("part_label").dropColumn("start_node_id").execute();
}
