import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { AuditEventTable, Database } from "../db/schema.ts";

export type AuditEventRow = Selectable<AuditEventTable>;

export async function insertAuditEvent(db: Kysely<Database>, event: Insertable<AuditEventTable>): Promise<void> {
  await db.insertInto("audit_events").values(event).execute();
}

export interface AuditFilter {
  organizationId: string;
  actorId: string | undefined;
  resourceId: string | undefined;
  startTime: Date | undefined;
  endTime: Date | undefined;
}

/**
 * Events of an organization and the sign-ins of its present members, newest first (ids are UUIDv7,
 * so they sort by time), before `beforeId` when given.
 */
export async function listAuditEvents(db: Kysely<Database>, filter: AuditFilter & { beforeId: string | undefined; limit: number }): Promise<AuditEventRow[]> {
  let query = db
    .selectFrom("audit_events")
    .selectAll()
    .where((eb) =>
      eb.or([
        eb("organization_id", "=", filter.organizationId),
        eb.and([
          eb("organization_id", "is", null),
          eb(
            "actor_id",
            "in",
            eb.selectFrom("memberships").select(sql<string>`account_id::text`.as("id")).where("organization_id", "=", filter.organizationId),
          ),
        ]),
      ]),
    );
  if (filter.actorId !== undefined) query = query.where("actor_id", "=", filter.actorId);
  if (filter.resourceId !== undefined) query = query.where("resource_id", "=", filter.resourceId);
  if (filter.startTime !== undefined) query = query.where("time", ">=", filter.startTime);
  if (filter.endTime !== undefined) query = query.where("time", "<", filter.endTime);
  if (filter.beforeId !== undefined) query = query.where("id", "<", filter.beforeId);
  return query.orderBy("id", "desc").limit(filter.limit).execute();
}

/** Removes events older than `before` (the retention setting). */
export async function deleteAuditEventsBefore(db: Kysely<Database>, before: Date): Promise<number> {
  const result = await db.deleteFrom("audit_events").where("time", "<", before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
