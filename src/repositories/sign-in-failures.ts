import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";

/**
 * Counts an attempt for each subject before its password is checked, and returns each subject's
 * attempts in its window, this one included (in `subjects`' order); a window older than
 * `windowStart` starts again at `now`. One statement takes each subject's row lock in turn, so
 * attempts made at the same moment each see the ones before them: a limit holds however many
 * arrive together. Subjects are locked in the order given; callers give them in one fixed order.
 */
export async function reserveSignInAttempt(db: Kysely<Database>, subjects: string[], now: Date, windowStart: Date): Promise<number[]> {
  const rows = await db
    .insertInto("sign_in_failures")
    .values(subjects.map((subject) => ({ subject, failures: 1, window_start: now })))
    .onConflict((oc) =>
      oc.column("subject").doUpdateSet({
        failures: sql`case when sign_in_failures.window_start > ${windowStart} then sign_in_failures.failures + 1 else 1 end`,
        window_start: sql`case when sign_in_failures.window_start > ${windowStart} then sign_in_failures.window_start else ${now} end`,
      }),
    )
    .returning(["subject", "failures"])
    .execute();
  const failures = new Map(rows.map((row) => [row.subject, row.failures]));
  return subjects.map((subject) => failures.get(subject) ?? 0);
}

/** A reserved attempt that succeeded: it is not a failure of `subject`. */
export async function releaseSignInAttempt(db: Kysely<Database>, subject: string): Promise<void> {
  await db.updateTable("sign_in_failures").set({ failures: sql`greatest(failures - 1, 0)` }).where("subject", "=", subject).execute();
}

export async function clearSignInFailures(db: Kysely<Database>, subject: string): Promise<void> {
  await db.deleteFrom("sign_in_failures").where("subject", "=", subject).execute();
}
