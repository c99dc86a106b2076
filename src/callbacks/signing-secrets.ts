import { randomBytes } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import type { Database, SigningSecretTable } from "../db/schema.ts";
import { newId } from "../services/ids.ts";
import type { SecretBox } from "./secret-box.ts";

export type SigningSecretRow = Selectable<SigningSecretTable>;

/** A new secret value: "whsec_" and 256 random bits in base64url. The whole string is the HMAC key. */
export function newSecretValue(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

const SIGNING_COLUMNS = ["id", "organization_id", "hint", "create_time", "expire_time"] as const;

export interface Rotation {
  secret: Omit<SigningSecretRow, "ciphertext">;
  value: string;
  previous: Omit<SigningSecretRow, "ciphertext"> | undefined;
}

/**
 * Makes a new current secret. The former current one signs until now + graceSeconds; a secret still
 * in an earlier grace period is dropped, so at most two ever sign. Rotations of one organization are
 * serialized on its row.
 */
export async function rotateSigningSecret(db: Kysely<Database>, box: SecretBox, organizationId: string, graceSeconds: number, now: Date): Promise<Rotation> {
  return db.transaction().execute(async (trx) => {
    await trx.selectFrom("organizations").select("id").where("id", "=", organizationId).forUpdate().execute();
    await trx.deleteFrom("signing_secrets").where("organization_id", "=", organizationId).where("expire_time", "is not", null).execute();
    const previous = await trx
      .updateTable("signing_secrets")
      .set({ expire_time: new Date(now.getTime() + graceSeconds * 1000) })
      .where("organization_id", "=", organizationId)
      .where("expire_time", "is", null)
      .returning(SIGNING_COLUMNS)
      .executeTakeFirst();
    const value = newSecretValue();
    const secret = await trx
      .insertInto("signing_secrets")
      .values({ id: newId(), organization_id: organizationId, ciphertext: box.seal(value, organizationId), hint: value.slice(-4), create_time: now })
      .returning(SIGNING_COLUMNS)
      .executeTakeFirstOrThrow();
    return { secret, value, previous };
  });
}

/** The secrets that sign now: the current one first, then a previous one still in its grace period. */
export async function activeSigningSecrets(db: Kysely<Database>, organizationId: string, now: Date): Promise<SigningSecretRow[]> {
  return db
    .selectFrom("signing_secrets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where((eb) => eb.or([eb("expire_time", "is", null), eb("expire_time", ">", now)]))
    .orderBy("expire_time", (ob) => ob.desc().nullsFirst())
    .execute();
}

/** Stops the previous secret signing at once; returns it, or undefined when there was none. */
export async function expirePreviousSigningSecret(db: Kysely<Database>, organizationId: string, now: Date) {
  return db
    .updateTable("signing_secrets")
    .set({ expire_time: now })
    .where("organization_id", "=", organizationId)
    .where("expire_time", ">", now)
    .returning(SIGNING_COLUMNS)
    .executeTakeFirst();
}

/** The values that sign an organization's callbacks now, current first. */
export async function signingSecretValues(db: Kysely<Database>, box: SecretBox, organizationId: string, now: Date): Promise<string[]> {
  const rows = await activeSigningSecrets(db, organizationId, now);
  return rows.map((row) => box.open(row.ciphertext, organizationId));
}
