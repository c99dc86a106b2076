import { type Insertable, type Kysely, type Selectable, sql } from "kysely";
import type { AccountTable, Database } from "../db/schema.ts";
import { isUuid } from "../ids.ts";

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
