import { randomUUID } from "node:crypto";
import type { KyselyPlugin } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { QueuedRunsCap } from "../../src/api/queued-runs-cap.ts";
import type { Db } from "../../src/data/db/schema.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { testDatabase } from "../support/database.ts";
import { connectErrorOf } from "../support/errors.ts";

let db: Db;
beforeAll(async () => {
  db = await testDatabase();
});

/** The database, counting the statements sent through it. */
function counting(database: Db): { db: Db; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements++;
      return node;
    },
    transformResult: async ({ result }) => result,
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
});
