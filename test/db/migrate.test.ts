import { randomBytes } from "node:crypto";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, inject } from "vitest";
import { migrateToLatest } from "../../src/data/db/migrate.ts";
import { migrations } from "../../src/data/db/migrations/index.ts";

describe("migrations", () => {
  const name = `docpipe_migrate_${randomBytes(4).toString("hex")}`;
  const serverUrl = inject("databaseServerUrl");
  let admin: pg.Client;
  let db: Kysely<unknown>;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    // Dropping the database (with force) may end a client that is still closing; that is expected.
    pool.on("error", () => {});
    db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  });

  afterAll(async () => {
    await db.destroy();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  });

  it("migrates an empty database up to the latest schema", async () => {
    const applied = await migrateToLatest(db);
    expect(applied).toEqual(Object.keys(migrations).sort());
    const { rows } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = 'public' and table_name not like 'kysely_%'
      order by table_name`.execute(db);
    expect(rows.map((row) => row.table_name)).toEqual([
      "accounts",
      "api_keys",
      "audit_events",
      "callback_deliveries",
      "callback_delivery_attempts",
      "dedupe_keys",
      "files",
      "idempotency_keys",
      "invitations",
      "memberships",
      "organizations",
      "pipeline_versions",
      "pipes",
      "run_steps",
      "runs",
      "service_tokens",
      "sessions",
      "sign_in_failures",
      "signing_secrets",
      "workspaces",
    ]);
  });

  it("keys a run to its pipe, file, key and family; its organization and workspace are held through its pipe", async () => {
    const { rows } = await sql<{ column_name: string; target: string; on_delete: string }>`
      select a.attname as column_name, c.confrelid::regclass::text as target, c.confdeltype as on_delete
      from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.conrelid = 'runs'::regclass and c.contype = 'f' order by a.attname`.execute(db);
    expect(rows).toEqual([
      { column_name: "api_key_id", target: "api_keys", on_delete: "n" },
      { column_name: "file_id", target: "files", on_delete: "a" },
      { column_name: "parent_run_id", target: "runs", on_delete: "c" },
      { column_name: "pipe_id", target: "pipes", on_delete: "c" },
      { column_name: "rerun_of", target: "runs", on_delete: "n" },
    ]);
    const { rows: pipeKeys } = await sql<{ column_name: string; target: string }>`
      select a.attname as column_name, c.confrelid::regclass::text as target
      from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      where c.conrelid = 'pipes'::regclass and c.contype = 'f' order by a.attname`.execute(db);
    expect(pipeKeys).toEqual([
      { column_name: "organization_id", target: "organizations" },
      { column_name: "workspace_id", target: "workspaces" },
    ]);
  });

  it("does nothing when run again", async () => {
    expect(await migrateToLatest(db)).toEqual([]);
  });

  it("names migrations with a timestamp prefix, so they sort in the order they run", () => {
    for (const migration of Object.keys(migrations)) expect(migration).toMatch(/^\d{4}-\d{2}-\d{2}T\d{4}-[a-z0-9-]+$/);
  });
});

describe("migrations started by several processes at once", () => {
  const name = `docpipe_migrate_${randomBytes(4).toString("hex")}`;
  const serverUrl = inject("databaseServerUrl");
  let admin: pg.Client;
  const pools: Kysely<unknown>[] = [];

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
  });

  afterAll(async () => {
    await Promise.all(pools.map((db) => db.destroy()));
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  });

  it("apply each migration exactly once: the migrator holds a PostgreSQL advisory lock", async () => {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    for (let i = 0; i < 4; i++) {
      const pool = new pg.Pool({ connectionString: url.toString(), max: 2 });
      pool.on("error", () => {});
      pools.push(new Kysely({ dialect: new PostgresDialect({ pool }) }));
    }
    const applied = await Promise.all(pools.map((db) => migrateToLatest(db)));
    expect(applied.flat().sort()).toEqual(Object.keys(migrations).sort());
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(pools[0]!);
    expect(rows.map((row) => row.name)).toEqual(Object.keys(migrations).sort());
  });
});
