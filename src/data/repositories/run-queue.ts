import { sql } from "kysely";
import { prepared } from "../db/connection.ts";
import type { Db } from "../db/schema.ts";

/** How many runs are queued and how long the oldest has waited; one read of the pending-runs index. */
export async function queueStats(db: Db): Promise<{ queued: number; oldestAgeSeconds: number }> {
  const { rows } = await sql<{ queued: string; oldest_age: number | null }>`${prepared("queue_stats")}
    select count(*) as queued, extract(epoch from now() - min(create_time))::float8 as oldest_age
    from runs where status = 'queued'`.execute(db);
  const row = rows[0]!;
  return { queued: Number(row.queued), oldestAgeSeconds: Math.max(0, row.oldest_age ?? 0) };
}
