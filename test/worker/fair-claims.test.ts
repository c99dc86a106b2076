import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { newId } from "../../src/platform/ids.ts";
import { claimDelivery } from "../../src/data/repositories/callback-deliveries.ts";
import { type Claim, claimRun, finishRun } from "../../src/data/repositories/run-leases.ts";
import { pathologicalXlsx } from "../parse/hostile-samples.ts";
import { testDatabase } from "../support/database.ts";
import { addFile, createPipe, insertTenant, queueRuns, type Tenant, waitForRuns } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const bed = workerBed({ ownPool: true });

/** `count` queued runs of a new one-node pipe of the tenant, created in that order. */
async function backlog(tenant: Tenant, count: number): Promise<string[]> {
  const pipeId = await createPipe(bed.db, tenant, []);
  const fileId = await addFile(bed.db, bed.store, tenant, "a.txt", "txt", Buffer.from("a"));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(...(await queueRuns(bed.db, tenant, pipeId, fileId)));
  return ids;
}

/** One claim, as a worker slot makes it, retried while contended. */
async function claim(maxSlotsPerOrganization: number, pool = bed.db): Promise<Claim | undefined> {
  for (;;) {
    const result = await claimRun(pool, { workerId: "test", leaseSeconds: 60, maxSlotsPerOrganization });
    if (result !== "contended") return result;
  }
}

describe("fair claims", () => {
  it("a slot goes to the organization holding the fewest, not to the oldest run: B's one run is claimed before A's older backlog", async () => {
    const a = await insertTenant(bed.db);
    const b = await insertTenant(bed.db);
    const aRuns = await backlog(a, 12);
    expect((await claim(10))!.run.id).toBe(aRuns[0]);
    const [bRun] = await backlog(b, 1);
    // A's eleven queued runs are all older than B's, and A holds one slot, B none.
    expect((await claim(10))!.run.id).toBe(bRun);
    expect((await claim(10))!.run.id).toBe(aRuns[1]);
  });

  it("among organizations holding as many, the one whose oldest run has waited longest goes first", async () => {
    const a = await insertTenant(bed.db);
    const b = await insertTenant(bed.db);
    const [aFirst] = await backlog(a, 2);
    const [bFirst] = await backlog(b, 2);
    expect([(await claim(10))!.run.id, (await claim(10))!.run.id]).toEqual([aFirst, bFirst]);
  });

  it("no organization holds more than its cap; another organization's run is claimed meanwhile, and a finished run frees a slot", async () => {
    const a = await insertTenant(bed.db);
    const b = await insertTenant(bed.db);
    const aRuns = await backlog(a, 6);
    const first = (await claim(2))!;
    const second = (await claim(2))!;
    expect([first.run.id, second.run.id]).toEqual(aRuns.slice(0, 2));
    expect(await claim(2)).toBeUndefined();
    const [bRun] = await backlog(b, 1);
    expect((await claim(2))!.run.id).toBe(bRun);
    expect(await finishRun(bed.db, first.lease, "completed")).toBe(true);
    expect((await claim(2))!.run.id).toBe(aRuns[2]);
  });

  it("a run whose lease expired holds no slot, and is claimed again within the cap", async () => {
    const a = await insertTenant(bed.db);
    const aRuns = await backlog(a, 3);
    await claim(1);
    await bed.db
      .updateTable("runs")
      .set({ lease_expire_time: new Date(Date.now() - 1000) })
      .where("id", "=", aRuns[0]!)
      .execute();
    const again = (await claim(1))!;
    expect(again.run).toMatchObject({ id: aRuns[0], attempts: 2 });
    expect(await claim(1)).toBeUndefined();
  });

  it("the cap holds exactly under concurrent claims from many connections", async () => {
    const a = await insertTenant(bed.db);
    await backlog(a, 20);
    const pools = [bed.db, await testDatabase(), await testDatabase()];
    const claims = await Promise.all(Array.from({ length: 12 }, (_, index) => claim(3, pools[index % pools.length])));
    expect(claims.filter((result) => result !== undefined)).toHaveLength(3);
    const { count } = await bed.db
      .selectFrom("runs")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where("organization_id", "=", a.organizationId)
      .where("status", "=", "running")
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(3);
  });
});

describe("fair workers", () => {
  it("another organization's document completes while one organization's backlog of slow documents is still queued", async () => {
    const a = await insertTenant(bed.db);
    const b = await insertTenant(bed.db);
    const slowPipe = await createPipe(bed.db, a, [{ id: "parse", parse: {} }]);
    const slowFile = await addFile(bed.db, bed.store, a, "slow.xlsx", "xlsx", pathologicalXlsx());
    const aRuns = await queueRuns(bed.db, a, slowPipe, slowFile, 4);
    // Two pool processes: A holds one slot, so B's parse never queues in the pool behind A's slow one
    // (with one process, B would wait for A's current parse, seconds on a loaded machine).
    bed.start({ WORKER_CONCURRENCY: "2", TASK_POOL_SIZE: "2" });
    await waitForRuns(bed.db, [aRuns[0]!], ["running"]);
    const bPipe = await createPipe(bed.db, b, [{ id: "parse", parse: {} }]);
    const [bRun] = await queueRuns(bed.db, b, bPipe, await addFile(bed.db, bed.store, b, "b.txt", "txt", Buffer.from("b")));
    expect((await waitForRuns(bed.db, [bRun!], ["completed"], 30_000))[0]!.status).toBe("completed");
    // The default cap is half of the two slots: A never held both, and most of its backlog still waits.
    const statuses = await bed.db.selectFrom("runs").select("status").where("id", "in", aRuns).execute();
    expect(statuses.filter((run) => run.status === "queued").length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe("the prepared claims", () => {
  // Last in this file: it adds columns to its database's tables.
  it("keep working on a connection that prepared them when a migration adds a column (a process started before it)", async () => {
    const tenant = await insertTenant(bed.db);
    await bed.db.connection().execute(async (connection) => {
      const runWithDelivery = async () => {
        const [runId] = await backlog(tenant, 1);
        const claimed = await claim(10, connection);
        expect(claimed!.run.id).toBe(runId);
        const delivery = {
          id: newId(),
          organizationId: tenant.organizationId,
          nodeId: "hook",
          url: "http://127.0.0.1:9/",
          method: "POST",
          headers: {},
          timeoutMs: 1000,
          retries: 0,
          body: "{}",
        };
        expect(await finishRun(connection, claimed!.lease, "completed", "", { deliveries: [delivery] })).toBe(true);
        expect((await claimDelivery(connection, "test"))?.delivery).toMatchObject({ id: delivery.id, run_id: runId, body: "{}" });
      };
      await runWithDelivery();
      await sql`alter table runs add column added_later text`.execute(connection);
      await sql`alter table callback_deliveries add column added_later text`.execute(connection);
      await runWithDelivery();
    });
  });
});
