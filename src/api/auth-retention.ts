import type { Config } from "../platform/config.ts";
import type { Db } from "../data/db/schema.ts";
import { deleteAuditEventsBefore } from "../data/repositories/audit-events.ts";
import { deleteEndedSessions } from "../data/repositories/sessions.ts";

/** Deletes audit events older than AUDIT_RETENTION_DAYS and sessions that can no longer be used. */
export async function removeExpiredAuthRecords(db: Db, config: Pick<Config, "auditRetentionDays" | "sessionIdleMinutes">, now: Date): Promise<void> {
  await deleteAuditEventsBefore(db, new Date(now.getTime() - config.auditRetentionDays * 86_400_000));
  await deleteEndedSessions(db, now, new Date(now.getTime() - config.sessionIdleMinutes * 60_000));
}
