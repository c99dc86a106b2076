import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { AccountTable, Database } from "../db/schema.ts";
import { isUuid } from "../../platform/ids.ts";

export type AccountRow = Selectable<AccountTable>;

export async function insertAccount(db: Kysely<Database>, account: Insertable<AccountTable>): Promise<AccountRow> {
  return db.insertInto("accounts").values(account).returningAll().executeTakeFirstOrThrow();
}

/** The account with this email, compared regardless of case. */
export async function findAccountByEmail(db: Kysely<Database>, email: string): Promise<AccountRow | undefined> {
  return db.selectFrom("accounts").selectAll().where(sql<string>`lower(email)`, "=", email.toLowerCase()).executeTakeFirst();
}

export async function findAccount(db: Kysely<Database>, accountId: string): Promise<AccountRow | undefined> {
  if (!isUuid(accountId)) return undefined;
  return db.selectFrom("accounts").selectAll().where("id", "=", accountId).executeTakeFirst();
}

/** Links an OpenID identity (`issuer|sub`) to an account that has none yet; false when it has another. */
export async function linkOidcSubject(db: Kysely<Database>, accountId: string, subject: string): Promise<boolean> {
  const result = await db
    .updateTable("accounts")
    .set({ oidc_subject: subject })
    .where("id", "=", accountId)
    .where((where) => where.or([where("oidc_subject", "is", null), where("oidc_subject", "=", subject)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
