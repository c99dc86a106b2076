import type { Db } from "../db/schema.ts";

export interface IdempotencyClaim {
  organizationId: string;
  key: string;
  pipeId: string;
  now: Date;
  /** A record created before this is free again, whatever it holds. */
  windowStart: Date;
  /** An in-flight record (no run yet) created before this is abandoned and free again. */
  leaseStart: Date;
}

/**
 * Claims the key in one statement: inserts the record, or takes over one that is free again (past its
 * window, or in flight past its lease). The primary key is the arbiter, so concurrent claims from any
 * number of processes get exactly one winner. Returns whether this call holds the key now.
 */
export async function claimIdempotencyKey(db: Db, claim: IdempotencyClaim): Promise<boolean> {
  const claimed = await db
    .insertInto("idempotency_keys")
    .values({ organization_id: claim.organizationId, key: claim.key, pipe_id: claim.pipeId, run_id: null, create_time: claim.now })
    .onConflict((conflict) =>
      conflict
        .columns(["organization_id", "key"])
        .doUpdateSet((eb) => ({ pipe_id: eb.ref("excluded.pipe_id"), run_id: null, create_time: eb.ref("excluded.create_time") }))
        .where((eb) =>
          eb.or([
            eb("idempotency_keys.create_time", "<", claim.windowStart),
            eb.and([eb("idempotency_keys.run_id", "is", null), eb("idempotency_keys.create_time", "<", claim.leaseStart)]),
          ]),
        ),
    )
    .returning("key")
    .executeTakeFirst();
  return claimed !== undefined;
}

/**
 * Marks the key as used up by the run: completes the record while it is in flight (run_id null),
 * re-inserts it when it was released, or takes it over past its window. Returns false when another
 * run already used the key. Call inside the transaction that created the run: the row lock it takes
 * makes a concurrent completion wait, then see the run and fail.
 */
export async function completeIdempotencyKey(
  db: Db,
  record: { organizationId: string; key: string; pipeId: string; runId: string; now: Date; windowStart: Date },
): Promise<boolean> {
  const completed = await db
    .insertInto("idempotency_keys")
    .values({ organization_id: record.organizationId, key: record.key, pipe_id: record.pipeId, run_id: record.runId, create_time: record.now })
    .onConflict((conflict) =>
      conflict
        .columns(["organization_id", "key"])
        // The 24-hour window runs from the successful submission: only a 2xx uses up a key.
        .doUpdateSet((eb) => ({ pipe_id: eb.ref("excluded.pipe_id"), run_id: eb.ref("excluded.run_id"), create_time: eb.ref("excluded.create_time") }))
        .where((eb) => eb.or([eb("idempotency_keys.run_id", "is", null), eb("idempotency_keys.create_time", "<", record.windowStart)])),
    )
    .returning("key")
    .executeTakeFirst();
  return completed !== undefined;
}

/** The key's record (the run that used it, null while in flight), or undefined. */
export async function findIdempotencyKey(db: Db, organizationId: string, key: string): Promise<{ run_id: string | null } | undefined> {
  return db.selectFrom("idempotency_keys").select("run_id").where("organization_id", "=", organizationId).where("key", "=", key).executeTakeFirst();
}

/** Deletes the key's record if it is still in flight; a used-up key stays used. */
export async function releaseIdempotencyKey(db: Db, organizationId: string, key: string): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("organization_id", "=", organizationId).where("key", "=", key).where("run_id", "is", null).execute();
}
