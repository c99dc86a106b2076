import { type Kysely, sql } from "kysely";

// A worker's claim in one round trip. The fair claim is two statements that must run in that order
// in one transaction: the first picks the organization and locks its row, the second counts that
// organization's running runs with a snapshot taken after the lock (so the per-organization cap
// holds) and takes its oldest claimable run. Sent from the worker that was four round trips (begin,
// two statements, commit) on the path of every run; in a PL/pgSQL function each statement still
// takes its own snapshot, and the call is one.
//
// Returns the claimed run; a row of nulls when the chosen organization was filled or emptied by a
// concurrent claim (claim again at once); no row when nothing is claimable.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function claim_run(p_owner text, p_lease_seconds integer, p_cap integer) returns setof runs
    language plpgsql volatile as $$
    declare
      chosen uuid;
    begin
      with waiting as (
        select organization_id, min(create_time) as oldest from runs
        where status = 'queued' or (status = 'running' and lease_expire_time < now())
        group by organization_id
      ),
      holding as (
        select organization_id, count(*) as held from runs
        where status = 'running' and lease_expire_time >= now()
        group by organization_id
      )
      select o.id into chosen from organizations o
      join waiting w on w.organization_id = o.id
      left join holding h on h.organization_id = o.id
      where coalesce(h.held, 0) < p_cap
      order by coalesce(h.held, 0), w.oldest
      limit 1
      for no key update of o;
      if chosen is null then
        return;
      end if;
      return query update runs set
        status = 'running',
        lease_owner = p_owner,
        lease_expire_time = now() + make_interval(secs => p_lease_seconds),
        attempts = attempts + 1,
        start_time = coalesce(start_time, now())
      where id = (
        select id from runs
        where organization_id = chosen
          and (status = 'queued' or (status = 'running' and lease_expire_time < now()))
        order by create_time
        limit 1
        for update skip locked
      ) and status in ('queued', 'running')
        and (select count(*) from runs where organization_id = chosen and status = 'running' and lease_expire_time >= now()) < p_cap
      returning *;
      if not found then
        return next null::runs;
      end if;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function claim_run(text, integer, integer)`.execute(db);
}
