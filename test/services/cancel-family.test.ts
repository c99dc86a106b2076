import type { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/data/db/schema.ts";
import type { FileStore } from "../../src/data/storage/file-store.ts";
import { testDatabase, testDatabaseUrl } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { inMemoryClients } from "../support/services.ts";
import { sleep } from "../support/wait.ts";
import { addFile, createPipe, insertTenant, queueRuns, tempStore } from "../worker/fixtures.ts";

let db: Kysely<Database>;
let store: FileStore;
let part: pg.Client;

beforeAll(async () => {
  db = await testDatabase();
  const temp = await tempStore();
  store = temp.store;
  part = new pg.Client({ connectionString: await testDatabaseUrl() });
  await part.connect();
  return temp.remove;
});
afterAll(() => part.end());

/** Whether another backend of this database waits for a lock. */
async function someoneWaits(): Promise<boolean> {
  const { rows } = await part.query<{ waiting: number }>(
    "select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
  );
  return rows[0]!.waiting > 0;
}

describe("CancelRun of a split run while one of its parts ends", () => {
  // A part's end locks the part, then (the family trigger) its parent; a cancel of the parent locked
  // the parent, then (the cascade) its parts: PostgreSQL broke the deadlock by failing one of them.
  it("cancels the parent and its other parts, and lets the part's end commit: no deadlock", async () => {
    const tenant = await insertTenant(db);
    const pipeId = await createPipe(db, tenant, [{ id: "parse", parse: {} }]);
    const fileId = await addFile(db, store, tenant, "a.txt", "txt", Buffer.from("a"));
    const [parentId, firstPart, secondPart] = await queueRuns(db, tenant, pipeId, fileId, 3);
    await db.updateTable("runs").set({ status: "awaiting_children" }).where("id", "=", parentId!).execute();
    await part.query("update runs set status = 'running', parent_run_id = $1, part_index = 0 where id = any($2::uuid[])", [parentId, [firstPart, secondPart]]);

    // The first part's end has begun: its row is locked.
    await part.query("begin");
    await part.query("select 1 from runs where id = $1 for update", [firstPart]);
    const cancel = inMemoryClients(testDeps(db)).runs.cancelRun({ organizationId: tenant.organizationId, runId: parentId! });
    cancel.catch(() => {});
    for (let waited = 0; !(await someoneWaits()); waited += 20) {
      if (waited > 10_000) throw new Error("the cancel never waited for the part's lock");
      await sleep(20);
    }
    // The part ends (its trigger locks the parent) and commits.
    await part.query("update runs set status = 'completed', end_time = now() where id = $1", [firstPart]);
    await part.query("commit");

    const { run } = await cancel;
    expect(run!.id).toBe(parentId);
    const statuses = await db.selectFrom("runs").select(["id", "status"]).where("id", "in", [parentId!, firstPart!, secondPart!]).execute();
    expect(Object.fromEntries(statuses.map((row) => [row.id, row.status]))).toEqual({
      [parentId!]: "cancelled",
      [firstPart!]: "completed",
      [secondPart!]: "cancelled",
    });
  });
});
