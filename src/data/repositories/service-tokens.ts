import type { Insertable, Kysely, Selectable } from "kysely";
import type { Database, ServiceTokenTable } from "../db/schema.ts";
import { isUuid } from "../../platform/ids.ts";

export type ServiceTokenRow = Omit<Selectable<ServiceTokenTable>, "digest">;

const COLUMNS = ["id", "organization_id", "name", "hint", "role", "create_time", "expire_time", "last_used_time"] as const;

export async function insertServiceToken(db: Kysely<Database>, token: Insertable<ServiceTokenTable>): Promise<ServiceTokenRow> {
  return db.insertInto("service_tokens").values(token).returning(COLUMNS).executeTakeFirstOrThrow();
}

export async function findServiceTokenByDigest(db: Kysely<Database>, digest: Buffer): Promise<ServiceTokenRow | undefined> {
  return db.selectFrom("service_tokens").select(COLUMNS).where("digest", "=", digest).executeTakeFirst();
}

export async function listServiceTokens(
  db: Kysely<Database>,
  options: { organizationId: string; afterId: string | undefined; limit: number },
): Promise<ServiceTokenRow[]> {
  let query = db.selectFrom("service_tokens").select(COLUMNS).where("organization_id", "=", options.organizationId);
  if (options.afterId !== undefined) query = query.where("id", ">", options.afterId);
  return query.orderBy("id", "asc").limit(options.limit).execute();
}

export async function deleteServiceToken(db: Kysely<Database>, organizationId: string, tokenId: string): Promise<boolean> {
  if (!isUuid(organizationId) || !isUuid(tokenId)) return false;
  const result = await db.deleteFrom("service_tokens").where("organization_id", "=", organizationId).where("id", "=", tokenId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Records a use unless one was recorded within `resolutionMs` before `now`. */
export async function recordServiceTokenUse(db: Kysely<Database>, tokenId: string, now: Date, resolutionMs: number): Promise<void> {
  await db
    .updateTable("service_tokens")
    .set({ last_used_time: now })
    .where("id", "=", tokenId)
    .where((eb) => eb.or([eb("last_used_time", "is", null), eb("last_used_time", "<", new Date(now.getTime() - resolutionMs))]))
    .execute();
}
