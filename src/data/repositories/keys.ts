import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { ApiKeyTable, Database } from "../db/schema.ts";

/** Every column but the digest, which never leaves this module. */
const KEY_COLUMNS = [
  "id",
  "organization_id",
  "name",
  "hint",
  "permissions",
  "state",
  "create_time",
  "expire_time",
  "last_used_time",
  "deactivate_time",
  "pipe_ids",
  "workspace_ids",
] as const;

export type KeyRow = Pick<Selectable<ApiKeyTable>, (typeof KEY_COLUMNS)[number]>;

/** Which keys a listing shows; "active" means active and not expired, "expired" active and past expire_time. */
export type KeyStateFilter = "any" | "active" | "expired" | "deactivated";

/** What AuthenticateKey needs, from one indexed lookup by digest. */
export interface KeyCredentials {
  id: string;
  organization_id: string;
  permissions: string[];
  state: ApiKeyTable["state"];
  expire_time: Date | null;
  last_used_time: Date | null;
  plan: string;
  pipe_ids: string[] | null;
  workspace_ids: string[] | null;
}

export async function insertKey(db: Kysely<Database>, key: Insertable<ApiKeyTable>): Promise<KeyRow> {
  return db.insertInto("api_keys").values(key).returning(KEY_COLUMNS).executeTakeFirstOrThrow();
}

export async function findKey(db: Kysely<Database>, organizationId: string, keyId: string): Promise<KeyRow | undefined> {
  return db.selectFrom("api_keys").select(KEY_COLUMNS).where("organization_id", "=", organizationId).where("id", "=", keyId).executeTakeFirst();
}

/** Up to `limit` keys of the organization, newest first, after (older than) `afterId` when given. */
export async function listKeys(
  db: Kysely<Database>,
  options: { organizationId: string; state: KeyStateFilter; now: Date; afterId: string | undefined; limit: number },
): Promise<KeyRow[]> {
  const { organizationId, state, now, afterId, limit } = options;
  let query = db.selectFrom("api_keys").select(KEY_COLUMNS).where("organization_id", "=", organizationId);
  if (state === "deactivated") query = query.where("state", "=", "deactivated");
  if (state === "active") {
    query = query.where("state", "=", "active").where((eb) => eb.or([eb("expire_time", "is", null), eb("expire_time", ">", now)]));
  }
  if (state === "expired") query = query.where("state", "=", "active").where("expire_time", "<=", now);
  if (afterId !== undefined) query = query.where("id", "<", afterId);
  return query.orderBy("id", "desc").limit(limit).execute();
}

/** Deactivates the key; deactivating it again keeps the first deactivate_time (active keys have none). */
export async function deactivateKey(db: Kysely<Database>, organizationId: string, keyId: string, now: Date): Promise<KeyRow | undefined> {
  return db
    .updateTable("api_keys")
    .set({ state: "deactivated", deactivate_time: sql<Date>`coalesce(deactivate_time, ${now})` })
    .where("organization_id", "=", organizationId)
    .where("id", "=", keyId)
    .returning(KEY_COLUMNS)
    .executeTakeFirst();
}

export async function reactivateKey(db: Kysely<Database>, organizationId: string, keyId: string): Promise<KeyRow | undefined> {
  return db
    .updateTable("api_keys")
    .set({ state: "active", deactivate_time: null })
    .where("organization_id", "=", organizationId)
    .where("id", "=", keyId)
    .returning(KEY_COLUMNS)
    .executeTakeFirst();
}

/** Removes the key row for good; returns whether there was one. */
export async function deleteKey(db: Kysely<Database>, organizationId: string, keyId: string): Promise<boolean> {
  const result = await db.deleteFrom("api_keys").where("organization_id", "=", organizationId).where("id", "=", keyId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The key with this digest and its organization's plan: one query on the unique digest index. */
export async function findKeyCredentials(db: Kysely<Database>, digest: Buffer): Promise<KeyCredentials | undefined> {
  return db
    .selectFrom("api_keys")
    .innerJoin("organizations", "organizations.id", "api_keys.organization_id")
    .select([
      "api_keys.id",
      "api_keys.organization_id",
      "api_keys.permissions",
      "api_keys.state",
      "api_keys.expire_time",
      "api_keys.last_used_time",
      "api_keys.pipe_ids",
      "api_keys.workspace_ids",
      "organizations.plan",
    ])
    .where("api_keys.digest", "=", digest)
    .executeTakeFirst();
}

/**
 * Records a use of the key unless one was recorded within `resolutionMs` before `now`; the condition
 * is in the statement, so concurrent requests write at most once per interval.
 */
export async function recordKeyUse(db: Kysely<Database>, keyId: string, now: Date, resolutionMs: number): Promise<void> {
  await db
    .updateTable("api_keys")
    .set({ last_used_time: now })
    .where("id", "=", keyId)
    .where((eb) => eb.or([eb("last_used_time", "is", null), eb("last_used_time", "<=", new Date(now.getTime() - resolutionMs))]))
    .execute();
}
