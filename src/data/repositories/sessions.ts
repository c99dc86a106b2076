import { type Insertable, type Kysely, sql } from "kysely";
import type { MemberRole } from "../../platform/auth/roles.ts";
import type { Database, SessionTable } from "../db/schema.ts";

/** A live session with its person and their role in each organization, read in one query. */
export interface SessionCaller {
  session_id: string;
  account_id: string;
  email: string;
  last_seen_time: Date;
  expire_time: Date;
  roles: Record<string, MemberRole> | null;
}

export async function insertSession(db: Kysely<Database>, session: Insertable<SessionTable>): Promise<void> {
  await db.insertInto("sessions").values(session).execute();
}

/**
 * The session whose token has this digest, if it is within both its idle and its absolute expiry
 * at `now`, with its account's memberships: one round trip per authenticated call.
 */
export async function findLiveSession(db: Kysely<Database>, digest: Buffer, now: Date, idleSince: Date): Promise<SessionCaller | undefined> {
  return db
    .selectFrom("sessions")
    .innerJoin("accounts", "accounts.id", "sessions.account_id")
    .select([
      "sessions.id as session_id",
      "sessions.account_id",
      "accounts.email",
      "sessions.last_seen_time",
      "sessions.expire_time",
      sql<Record<
        string,
        MemberRole
      > | null>`(select json_object_agg(m.organization_id, m.role) from memberships m where m.account_id = sessions.account_id)`.as("roles"),
    ])
    .where("sessions.digest", "=", digest)
    .where("sessions.expire_time", ">", now)
    .where("sessions.last_seen_time", ">", idleSince)
    .executeTakeFirst();
}

/** Moves the idle expiry on; written at most once per `resolutionMs` (the condition is in the statement). */
export async function touchSession(db: Kysely<Database>, sessionId: string, now: Date, resolutionMs: number): Promise<void> {
  await db
    .updateTable("sessions")
    .set({ last_seen_time: now })
    .where("id", "=", sessionId)
    .where("last_seen_time", "<", new Date(now.getTime() - resolutionMs))
    .execute();
}

export async function deleteSession(db: Kysely<Database>, sessionId: string): Promise<void> {
  await db.deleteFrom("sessions").where("id", "=", sessionId).execute();
}

/** Ends every session of an account; returns how many there were. */
export async function deleteAccountSessions(db: Kysely<Database>, accountId: string): Promise<number> {
  const result = await db.deleteFrom("sessions").where("account_id", "=", accountId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes sessions past their absolute expiry or idle since `idleSince`. */
export async function deleteEndedSessions(db: Kysely<Database>, now: Date, idleSince: Date): Promise<void> {
  await db
    .deleteFrom("sessions")
    .where((eb) => eb.or([eb("expire_time", "<=", now), eb("last_seen_time", "<=", idleSince)]))
    .execute();
}
