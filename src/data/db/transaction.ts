import type { Db } from "./schema.ts";

/**
 * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. Services
 * compose repository calls into one unit of work with it, without holding Kysely themselves.
 */
export function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
