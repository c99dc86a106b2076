import type { Insertable, Kysely } from "kysely";
import type { MemberRole } from "../../platform/auth/roles.ts";
import type { Database, MembershipTable } from "../db/schema.ts";
import { isUuid } from "../../platform/ids.ts";

/** A membership with its account and organization names. */
export interface MemberRow {
  /** The account id; pages are cut by it. */
  id: string;
  organization_id: string;
  organization_name: string;
  email: string;
  name: string;
  account_create_time: Date;
  role: MemberRole;
  create_time: Date;
}

function members(db: Kysely<Database>) {
  return db
    .selectFrom("memberships")
    .innerJoin("accounts", "accounts.id", "memberships.account_id")
    .innerJoin("organizations", "organizations.id", "memberships.organization_id")
    .select([
      "accounts.id",
      "memberships.organization_id",
      "organizations.name as organization_name",
      "accounts.email",
      "accounts.name",
      "accounts.create_time as account_create_time",
      "memberships.role",
      "memberships.create_time",
    ]);
}

/** Adds the membership, or changes the role of an existing one. */
/** Adds a membership; false when the account is a member of that organization already (its role is left as it is). */
export async function insertMembership(db: Kysely<Database>, membership: Insertable<MembershipTable>): Promise<boolean> {
  const inserted = await db
    .insertInto("memberships")
    .values(membership)
    .onConflict((oc) => oc.columns(["organization_id", "account_id"]).doNothing())
    .returning("account_id")
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function findMember(db: Kysely<Database>, organizationId: string, accountId: string): Promise<MemberRow | undefined> {
  if (!isUuid(organizationId) || !isUuid(accountId)) return undefined;
  return members(db).where("memberships.organization_id", "=", organizationId).where("memberships.account_id", "=", accountId).executeTakeFirst();
}

export async function listMembers(db: Kysely<Database>, options: { organizationId: string; afterId: string | undefined; limit: number }): Promise<MemberRow[]> {
  let query = members(db).where("memberships.organization_id", "=", options.organizationId);
  if (options.afterId !== undefined) query = query.where("accounts.id", ">", options.afterId);
  return query.orderBy("accounts.id", "asc").limit(options.limit).execute();
}

/** Every membership of one account, with the organizations' names. */
export async function accountMemberships(db: Kysely<Database>, accountId: string): Promise<MemberRow[]> {
  return members(db).where("memberships.account_id", "=", accountId).orderBy("organizations.name").execute();
}

export async function setMemberRole(db: Kysely<Database>, organizationId: string, accountId: string, role: MemberRole): Promise<void> {
  await db.updateTable("memberships").set({ role }).where("organization_id", "=", organizationId).where("account_id", "=", accountId).execute();
}

export async function deleteMembership(db: Kysely<Database>, organizationId: string, accountId: string): Promise<void> {
  await db.deleteFrom("memberships").where("organization_id", "=", organizationId).where("account_id", "=", accountId).execute();
}

/** The owners of an organization, locked until the transaction ends so two changes cannot both remove "the other" owner. */
export async function lockOwners(db: Kysely<Database>, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("memberships")
    .select("account_id")
    .where("organization_id", "=", organizationId)
    .where("role", "=", "owner")
    .forUpdate()
    .execute();
  return rows.map((row) => row.account_id);
}
