import { sql } from "kysely";
import type { Db } from "../db/schema.ts";

/** A key a dedupe node saw: by its pipe, its digest (SHA-256, hex), the run asking and its clock. */
export interface SeenKey {
  pipeId: string;
  keyHash: string;
  runId: string;
  now: Date;
  /** A key given before this time is forgotten. */
  since: Date;
}

/**
 * Remembers the key for `runId` unless another run of the pipe gave it since `since`; returns the
 * run that holds it: `runId` itself for a new key (or one this run gave at an earlier attempt),
 * otherwise the run that gave it first. One statement, so two runs giving the key at once cannot
 * both find it new.
 */
export async function rememberKey(db: Db, seen: SeenKey): Promise<string> {
  // A run that gave the key at the same moment and committed after this statement's snapshot makes
  // the insert give way while the select cannot see its row yet: the next statement sees it.
  for (let attempt = 0; attempt < 3; attempt++) {
    const holder = await keyHolder(db, seen);
    if (holder !== undefined) return holder;
  }
  throw new Error("the dedupe key was taken and released again three times; try the run again");
}

/** The run of the pipe that gave the key since `seen.since`, if any; nothing is recorded. */
export async function findKeyHolder(db: Db, seen: Omit<SeenKey, "runId" | "now">): Promise<string | undefined> {
  const { rows } = await sql<{ run_id: string }>`
    select run_id from dedupe_keys where pipe_id = ${seen.pipeId} and key_hash = ${seen.keyHash} and seen_time >= ${seen.since}
  `.execute(db);
  return rows[0]?.run_id;
}

async function keyHolder(db: Db, seen: SeenKey): Promise<string | undefined> {
  const { rows } = await sql<{ run_id: string }>`
    with taken as (
      insert into dedupe_keys (pipe_id, key_hash, run_id, seen_time)
      values (${seen.pipeId}, ${seen.keyHash}, ${seen.runId}, ${seen.now})
      on conflict (pipe_id, key_hash) do update set run_id = excluded.run_id, seen_time = excluded.seen_time
        where dedupe_keys.seen_time < ${seen.since} or dedupe_keys.run_id = excluded.run_id
      returning run_id
    )
    select run_id from taken
    union all
    select run_id from dedupe_keys where pipe_id = ${seen.pipeId} and key_hash = ${seen.keyHash} and not exists (select 1 from taken)
  `.execute(db);
  return rows[0]?.run_id;
}
