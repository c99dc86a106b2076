import { randomUUID } from "node:crypto";
import { type KyselyPlugin, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { countReuseMs, QueuedRunsCap } from "../../src/api/queued-runs-cap.ts";
import type { Db } from "../../src/data/db/schema.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { testDatabase } from "../support/database.ts";
import { connectErrorOf } from "../support/errors.ts";
import { sleep, until } from "../support/wait.ts";

let db: Db;
beforeAll(async () => {
  db = await testDatabase();
  // A connection open before the counts: a first connect on a loaded machine must not eat the count's time.
  await sql`select 1`.execute(db);
});

/** The database, counting the statements sent through it; with `count`, each count answers that many runs. */
function counting(database: Db, count?: number): { db: Db; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements++;
      return node;
    },
    transformResult: async ({ result }) => (count === undefined ? result : { ...result, rows: [{ count: String(count) }] }),
  };
  return { db: database.withPlugin(plugin), statements: () => statements };
}

describe("QueuedRunsCap", () => {
  it("counts an organization's queued runs once for many submissions at once, and adds this process's runs to that count", async () => {
    const counted = counting(db);
    const cap = new QueuedRunsCap(counted.db, 10);
    const organizationId = randomUUID();
    // Twenty submissions arriving together, as at a count's expiry under load: one count between them.
    await Promise.all(Array.from({ length: 20 }, () => cap.check(organizationId, 1)));
    expect(counted.statements()).toBe(1);

    cap.added(organizationId, 3);
    await cap.check(organizationId, 7);
    const refused = await connectErrorOf(cap.check(organizationId, 8));
    expect(errorInfoOf(refused)?.reason).toBe("too_many_queued_runs");
    expect(counted.statements()).toBe(1);
  });

  it("reads a count in use again past half its time, answering from the last one meanwhile; the new count replaces it", async () => {
    const counted = counting(db);
    // A count reused for 2 s: read again past 1 s, and still held until 2 s, however slow this machine is meanwhile.
    const cap = new QueuedRunsCap(counted.db, 10, 2000);
    const organizationId = randomUUID();
    await cap.check(organizationId, 1);
    cap.added(organizationId, 10);
    await sleep(1100);
    // Answered by the count still held (10 of 10), which starts a read of it.
    expect(errorInfoOf(await connectErrorOf(cap.check(organizationId, 1)))?.reason).toBe("too_many_queued_runs");
    await until(() => counted.statements() === 2);
    // The database holds no runs of this organization: once read, the new count (0) answers.
    await until(() =>
      cap.check(organizationId, 10).then(
        () => true,
        () => false,
      ),
    );
    expect(counted.statements()).toBe(2);
  });

  it("reads a long queue far below the cap less often: 500,000 runs under a cap of 1,000,000 are counted again only past half of five times the time", async () => {
    const counted = counting(db, 500_000);
    const cap = new QueuedRunsCap(counted.db, 1_000_000, 1000);
    const organizationId = randomUUID();
    await cap.check(organizationId, 1);
    // Past the time an unstretched count would have been read again (0.5 s) and held (1 s).
    await sleep(1100);
    await cap.check(organizationId, 1);
    expect(counted.statements()).toBe(1);
  });
});

describe("countReuseMs", () => {
  it.each([
    [0, 10_000, 1000],
    [10_000, 10_000, 1000],
    [10_001, 10_000, 1000],
    [20_000, 1_000_000, 1000],
    [100_000, 1_000_000, 5000],
    [200_000, 1_000_000, 8000],
    [500_000, 1_000_000, 5000],
    [950_000, 1_000_000, 1000],
    [1_000_001, 1_000_000, 1000],
    [5_000_000, 100_000_000, 9500],
  ])("a count of %i runs under a cap of %i is reused %i ms", (count, limit, ms) => {
    expect(countReuseMs(count, limit, 1000)).toBeCloseTo(ms, 6);
  });
});
