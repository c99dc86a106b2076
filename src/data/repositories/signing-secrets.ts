import type { Selectable } from "kysely";
import type { Db, SigningSecretTable } from "../db/schema.ts";

export type SigningSecretRow = Selectable<SigningSecretTable>;

/** A secret as listings show it: everything but the sealed value. */
export type SigningSecretSummary = Omit<SigningSecretRow, "ciphertext">;

const SIGNING_COLUMNS = ["id", "organization_id", "hint", "create_time", "expire_time"] as const;

/** A new current secret, already sealed for its organization. */
export interface NewSigningSecret {
  id: string;
  organizationId: string;
  ciphertext: Buffer;
  hint: string;
}

export interface Rotation {
  secret: SigningSecretSummary;
  previous: SigningSecretSummary | undefined;
}

/**
 * Makes `next` the current secret. The former current one signs until now + graceSeconds; a secret still
 * in an earlier grace period is dropped, so at most two ever sign. Rotations of one organization are
 * serialized on its row.
 */
export async function rotateSigningSecret(db: Db, next: NewSigningSecret, graceSeconds: number, now: Date): Promise<Rotation> {
  const { organizationId } = next;
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
    const secret = await trx
      .insertInto("signing_secrets")
      .values({ id: next.id, organization_id: organizationId, ciphertext: next.ciphertext, hint: next.hint, create_time: now })
      .returning(SIGNING_COLUMNS)
      .executeTakeFirstOrThrow();
    return { secret, previous };
  });
}

/** The secrets that sign now: the current one first, then a previous one still in its grace period. */
export async function activeSigningSecrets(db: Db, organizationId: string, now: Date): Promise<SigningSecretRow[]> {
  return db
    .selectFrom("signing_secrets")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .where((eb) => eb.or([eb("expire_time", "is", null), eb("expire_time", ">", now)]))
    .orderBy("expire_time", (ob) => ob.desc().nullsFirst())
    .execute();
}

/** Stops the previous secret signing at once; returns it, or undefined when there was none. */
export async function expirePreviousSigningSecret(db: Db, organizationId: string, now: Date): Promise<SigningSecretSummary | undefined> {
  return db
    .updateTable("signing_secrets")
    .set({ expire_time: now })
    .where("organization_id", "=", organizationId)
    .where("expire_time", ">", now)
    .returning(SIGNING_COLUMNS)
    .executeTakeFirst();
}
