import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";

/** Which of `sha256s` some file row names. */
export async function referencedSha256s(db: Kysely<Database>, sha256s: readonly string[]): Promise<Set<string>> {
  if (sha256s.length === 0) return new Set();
  const rows = await db.selectFrom("files").select("sha256").distinct().where("sha256", "in", sha256s).execute();
  return new Set(rows.map((row) => row.sha256));
}
