import { type CompiledQuery, type DatabaseConnection, type Driver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { RunsQueuedNotifier } from "../../src/data/db/run-notifications.ts";
import { sleep } from "../support/wait.ts";

/**
 * A Kysely whose every statement is recorded instead of sent, so notifications are counted exactly;
 * with `refuse`, each statement then fails as on a database that is down.
 */
function recordingDatabase(refuse = false): { db: Kysely<unknown>; statements: CompiledQuery[] } {
  const statements: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: async (query) => {
      statements.push(query);
      if (refuse) throw new Error("database down");
      return { rows: [] };
    },
    streamQuery: () => {
      throw new Error("not used");
    },
  };
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  const db = new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, statements };
}

describe("RunsQueuedNotifier", () => {
  it("notifies the first queued run at once, on the runs channel", async () => {
    const { db, statements } = recordingDatabase();
    new RunsQueuedNotifier(db).queued();
    await sleep(0);
    expect(statements.map((statement) => [statement.sql, statement.parameters])).toEqual([["select pg_notify('docpipe_runs', '')", []]]);
  });

  it("coalesces a burst into one notification at once and one when the window ends, so the last run is not missed", async () => {
    // The window's clock is the test's: a busy machine cannot end it between two calls.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const { db, statements } = recordingDatabase();
      const notifier = new RunsQueuedNotifier(db);
      for (let i = 0; i < 50; i++) notifier.queued();
      await vi.advanceTimersByTimeAsync(0);
      expect(statements).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(100);
      expect(statements).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(100);
      expect(statements).toHaveLength(2);
      notifier.queued();
      await vi.advanceTimersByTimeAsync(0);
      expect(statements).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it("close sends the notification a window still owes at once, and waits for it", async () => {
    const { db, statements } = recordingDatabase();
    const notifier = new RunsQueuedNotifier(db);
    notifier.queued();
    notifier.queued();
    await notifier.close();
    expect(statements).toHaveLength(2);
    await sleep(100);
    expect(statements).toHaveLength(2);
  });

  it("drops a notification the database refuses: workers poll, and the request already succeeded", async () => {
    const { db, statements } = recordingDatabase(true);
    const notifier = new RunsQueuedNotifier(db);
    notifier.queued();
    notifier.queued();
    // Both notifications were tried and refused; neither reaches the caller, not even through close().
    await expect(notifier.close()).resolves.toBeUndefined();
    expect(statements).toHaveLength(2);
  });
});
