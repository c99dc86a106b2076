import type { Insertable, Kysely, Selectable } from "kysely";
import type { Database, InvitationTable } from "../db/schema.ts";
import { isUuid } from "../../platform/ids.ts";

export type InvitationRow = Omit<Selectable<InvitationTable>, "digest">;

const COLUMNS = ["id", "organization_id", "email", "role", "create_time", "expire_time"] as const;

export async function insertInvitation(db: Kysely<Database>, invitation: Insertable<InvitationTable>): Promise<InvitationRow> {
  return db.insertInto("invitations").values(invitation).returning(COLUMNS).executeTakeFirstOrThrow();
}

/** Open invitations of an organization, oldest first. */
export async function listInvitations(
  db: Kysely<Database>,
  options: { organizationId: string; now: Date; afterId: string | undefined; limit: number },
): Promise<InvitationRow[]> {
  let query = db.selectFrom("invitations").select(COLUMNS).where("organization_id", "=", options.organizationId).where("expire_time", ">", options.now);
  if (options.afterId !== undefined) query = query.where("id", ">", options.afterId);
  return query.orderBy("id", "asc").limit(options.limit).execute();
}

export async function deleteInvitation(db: Kysely<Database>, organizationId: string, invitationId: string): Promise<boolean> {
  if (!isUuid(organizationId) || !isUuid(invitationId)) return false;
  const result = await db.deleteFrom("invitations").where("organization_id", "=", organizationId).where("id", "=", invitationId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Takes the open invitation with this digest: it is deleted as it is read, so a link works once. */
export async function takeInvitation(db: Kysely<Database>, digest: Buffer, now: Date): Promise<InvitationRow | undefined> {
  return db.deleteFrom("invitations").where("digest", "=", digest).where("expire_time", ">", now).returning(COLUMNS).executeTakeFirst();
}
