import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";

/** A subject whose attempts are counted (an account, a client address), and how many failures it may have in a window. */
export interface AttemptSubject {
  subject: string;
  limit: number;
}

/**
 * Counts an attempt for every subject before its password is checked, if each subject is under its
 * limit; false, counting nothing, when one is not. Done in one transaction that locks the subjects'
 * rows (in the order given; callers give them in one fixed order), so attempts made at the same
 * moment each see the ones before them and no more than the limit reach the check. An attempt
 * refused here is not counted: it checked no password, and counting it would let one address's
 * refused guesses lock any number of accounts. A window older than `windowStart` starts again at `now`.
 */
export async function reserveSignInAttempt(db: Kysely<Database>, subjects: readonly AttemptSubject[], now: Date, windowStart: Date): Promise<boolean> {
  const names = subjects.map(({ subject }) => subject);
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto("sign_in_failures")
      .values(names.map((subject) => ({ subject, failures: 0, window_start: now })))
      .onConflict((oc) => oc.column("subject").doNothing())
      .execute();
    const rows = await trx.selectFrom("sign_in_failures").select(["subject", "failures", "window_start"]).where("subject", "in", names).forUpdate().execute();
    const counted = new Map(rows.map((row) => [row.subject, row.window_start > windowStart ? row.failures : 0]));
    if (subjects.some(({ subject, limit }) => (counted.get(subject) ?? 0) >= limit)) return false;
    await trx
      .updateTable("sign_in_failures")
      .set({
        failures: sql`case when window_start > ${windowStart} then failures + 1 else 1 end`,
        window_start: sql`case when window_start > ${windowStart} then window_start else ${now} end`,
      })
      .where("subject", "in", names)
      .execute();
    return true;
  });
}

/** A reserved attempt that turned out not to be a failure of `subject` (it succeeded, or could not be checked). */
export async function releaseSignInAttempt(db: Kysely<Database>, subject: string): Promise<void> {
  await db.updateTable("sign_in_failures").set({ failures: sql`greatest(failures - 1, 0)` }).where("subject", "=", subject).execute();
}

export async function clearSignInFailures(db: Kysely<Database>, subject: string): Promise<void> {
  await db.deleteFrom("sign_in_failures").where("subject", "=", subject).execute();
}
