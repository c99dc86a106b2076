import type { Config } from "../config.ts";
import type { Db } from "../db/schema.ts";
import { deleteAuditEventsBefore } from "../repositories/audit-events.ts";
import { deleteEndedSessions } from "../repositories/sessions.ts";

/** Deletes audit events older than AUDIT_RETENTION_DAYS and sessions that can no longer be used. */
export async function removeExpiredAuthRecords(db: Db, config: Pick<Config, "auditRetentionDays" | "sessionIdleMinutes">, now: Date): Promise<void> {
  await deleteAuditEventsBefore(db, new Date(now.getTime() - config.auditRetentionDays * 86_400_000));
  await deleteEndedSessions(db, now, new Date(now.getTime() - config.sessionIdleMinutes * 60_000));
}
