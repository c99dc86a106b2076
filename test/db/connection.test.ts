import { CompiledQuery, sql } from "kysely";
import pg from "pg";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { connectDatabase, prepared, preparedText, redactUrl } from "../../src/data/db/connection.ts";
import { testDatabase } from "../support/database.ts";

let db: Awaited<ReturnType<typeof testDatabase>>;

beforeAll(async () => {
  db = await testDatabase();
});

/** The names of the statements prepared on this connection (PostgreSQL's own view of the session). */
async function preparedNames(connection: typeof db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(connection);
  return rows.map((row) => row.name);
}

describe("prepared statements", () => {
  it("a statement marked with prepared(name) is prepared once per connection and runs with new parameters each time", async () => {
    await db.connection().execute(async (connection) => {
      const double = (value: number) => sql<{ doubled: number }>`${prepared("test_double")} select ${value}::int * 2 as doubled`.execute(connection);
      expect((await double(2)).rows).toEqual([{ doubled: 4 }]);
      expect((await double(21)).rows).toEqual([{ doubled: 42 }]);
      expect(await preparedNames(connection)).toContain("test_double");
    });
  });

  it("a statement kysely builds is prepared when it ends with the mark (modifyEnd), and pg refuses the name for another text", async () => {
    await db.connection().execute(async (connection) => {
      const organization = (id: string) =>
        connection.selectFrom("organizations").select("name").where("id", "=", id).modifyEnd(prepared("test_built")).execute();
      expect(await organization("00000000-0000-0000-0000-000000000000")).toEqual([]);
      expect(await organization("00000000-0000-0000-0000-000000000001")).toEqual([]);
      expect(await preparedNames(connection)).toContain("test_built");
      await expect(sql`${prepared("test_built")} select 1`.execute(connection)).rejects.toThrow(/Prepared statements must be unique/);
    });
  });

  it("a statement written out with preparedText is prepared once per connection, in a transaction too", async () => {
    const text = preparedText("test_text", "select $1::int * 2 as doubled");
    const double = (connection: typeof db, value: number) => connection.executeQuery<{ doubled: number }>(CompiledQuery.raw(text, [value]));
    await db.connection().execute(async (connection) => {
      expect((await double(connection, 2)).rows).toEqual([{ doubled: 4 }]);
      expect((await double(connection, 21)).rows).toEqual([{ doubled: 42 }]);
      expect(await preparedNames(connection)).toContain("test_text");
    });
    await db.transaction().execute(async (trx) => {
      expect((await double(trx, 5)).rows).toEqual([{ doubled: 10 }]);
      expect(await preparedNames(trx)).toContain("test_text");
    });
  });

  it("refuses a name the marker could not carry", () => {
    for (const mark of [prepared, (name: string) => preparedText(name, "select 1")]) {
      expect(() => mark("two words")).toThrow(/letters, digits and _/);
      expect(() => mark("x */ drop table runs; /*")).toThrow(/letters, digits and _/);
    }
  });

  it("works inside a transaction, and statements without the mark are not prepared", async () => {
    await db.transaction().execute(async (trx) => {
      await sql`${prepared("test_in_transaction")} select ${"x"}::text as value`.execute(trx);
      const names = await preparedNames(trx);
      expect(names).toContain("test_in_transaction");
      await sql`select ${"y"}::text as unmarked`.execute(trx);
      expect(await preparedNames(trx)).toEqual(names);
    });
  });
});

describe("a query asked for as a promise", () => {
  // pg's own promise form writes `query.callback = (err, res) => ...`, which V8 allocates in the old
  // generation: it kept every awaiting request alive past young collections (bench/README.md).
  it("is sent to pg with a callback made by our client, named or not, and settles as pg answers", async () => {
    const query = vi.spyOn(pg.Client.prototype, "query");
    try {
      const named = preparedText("test_callback", "select $1::int + 1 as next");
      expect((await db.executeQuery<{ next: number }>(CompiledQuery.raw(named, [41]))).rows).toEqual([{ next: 42 }]);
      expect((await sql<{ one: number }>`select ${1}::int as one`.execute(db)).rows).toEqual([{ one: 1 }]);
      const failure = await sql`select 1 / ${0}::int`.execute(db).then(
        () => undefined,
        (error: unknown) => error as { code?: string },
      );
      expect(failure?.code).toBe("22012");
      const texts = new Set([named, "select $1::int as one", "select 1 / $1::int"]);
      const sent = query.mock.calls.filter(([config]) => texts.has(typeof config === "string" ? config : (config as { text: string }).text));
      expect(sent).toHaveLength(3);
      for (const [, , callback] of sent) expect(callback).toBeTypeOf("function");
    } finally {
      query.mockRestore();
    }
  });
});

describe("the database URL's password never reaches a message or a log", () => {
  // libpq and pg-connection-string both take the password from the query as well as from user:password@.
  const url = "postgres://postgres@127.0.0.1:1/test?password=hunter2-db-secret";

  it('redactUrl hides a password given in the query (it is what the "database ready" log line prints)', () => {
    expect(redactUrl(url)).not.toContain("hunter2-db-secret");
  });

  it("a failed connection's error does not carry a password given in the query", async () => {
    const error = await connectDatabase(url, { connectTimeoutMs: 1000 }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/cannot connect to PostgreSQL/);
    expect(error!.message).not.toContain("hunter2-db-secret");
  });
});

describe("the tests' embedded PostgreSQL", () => {
  // Only when the run started its own server (no DATABASE_URL): a cluster thrown away after the run.
  it.skipIf(process.env.DATABASE_URL !== undefined)("neither fsyncs nor waits for the disk at commit (test/global-setup.ts)", async () => {
    const { rows } = await sql<{ fsync: string; synchronous_commit: string }>`select current_setting('fsync') as fsync,
      current_setting('synchronous_commit') as synchronous_commit`.execute(db);
    expect(rows).toEqual([{ fsync: "off", synchronous_commit: "off" }]);
  });
});
