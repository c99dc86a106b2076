import { type Kysely, sql } from "kysely";
import type { Database } from "../db/schema.ts";

/** Failures counted for each subject since its window started, ignoring windows that began before `windowStart`. */
export async function countSignInFailures(db: Kysely<Database>, subjects: string[], windowStart: Date): Promise<number[]> {
  const rows = await db
    .selectFrom("sign_in_failures")
    .select(["subject", "failures"])
    .where("subject", "in", subjects)
    .where("window_start", ">", windowStart)
    .execute();
  return subjects.map((subject) => rows.find((row) => row.subject === subject)?.failures ?? 0);
}

/** Counts one failure for each subject; a window older than `windowStart` starts again at `now`. */
export async function recordSignInFailure(db: Kysely<Database>, subjects: string[], now: Date, windowStart: Date): Promise<void> {
  await db
    .insertInto("sign_in_failures")
    .values(subjects.map((subject) => ({ subject, failures: 1, window_start: now })))
    .onConflict((oc) =>
      oc.column("subject").doUpdateSet({
        failures: sql`case when sign_in_failures.window_start > ${windowStart} then sign_in_failures.failures + 1 else 1 end`,
        window_start: sql`case when sign_in_failures.window_start > ${windowStart} then sign_in_failures.window_start else ${now} end`,
      }),
    )
    .execute();
}

export async function clearSignInFailures(db: Kysely<Database>, subject: string): Promise<void> {
  await db.deleteFrom("sign_in_failures").where("subject", "=", subject).execute();
}
