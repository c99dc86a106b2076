import { readFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/platform/config.ts";
import { connectDatabase } from "../../src/data/db/connection.ts";
import { type EmbeddedServer, SERVICE_ROLE, startEmbeddedPostgres } from "../../src/data/db/embedded.ts";
import { migrateToLatest } from "../../src/data/db/migrate.ts";
import { openDatabase } from "../../src/data/db/open.ts";
import { withDatabase } from "../../src/data/db/service-role.ts";

/** Secrets the service holds in its environment; none may reach the database server. */
const CANARIES = { INTERNAL_TOKEN: "canary-internal-token", SMTP_URL: "smtp://canary-smtp-password@127.0.0.1:2525", AWS_SECRET_ACCESS_KEY: "canary-aws" };

/** The environment PostgreSQL keeps for a process of its own: /proc/<pid>/environ, as NAME=value lines. */
async function environOf(pid: number): Promise<string[]> {
  return (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0").filter(Boolean);
}

async function parentOf(pid: number): Promise<number> {
  return Number(/^PPid:\s*(\d+)/m.exec(await readFile(`/proc/${pid}/status`, "utf8"))![1]);
}

/** Runs `statements` in order on one connection to `url`; resolves to the last one's rows. */
async function query(url: string, ...statements: string[]): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let rows: Record<string, unknown>[] = [];
    for (const statement of statements) rows = (await client.query(statement)).rows;
    return rows;
  } finally {
    await client.end();
  }
}

function start(dir: string): Promise<EmbeddedServer> {
  return startEmbeddedPostgres({
    dir,
    port: undefined,
    database: "docpipe",
    log: () => {},
    warn: () => {},
    settings: { fsync: "off", synchronous_commit: "off" },
  });
}

describe("the embedded PostgreSQL", () => {
  let dir: string;
  let server: EmbeddedServer;

  beforeAll(async () => {
    // Under the checkout, so that as root the postgres user reaches it (a tmpdir folder is 0700).
    await mkdir(resolve(".data"), { recursive: true });
    dir = await mkdtemp(resolve(".data", "embedded-privileges-"));
    const saved = Object.keys(CANARIES).map((name) => [name, process.env[name]] as const);
    Object.assign(process.env, CANARIES);
    try {
      server = await start(dir);
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    return async () => {
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    };
  });

  it("runs without the service's environment: neither the server nor the programs it runs see its secrets", async () => {
    // The server process of a connection, while it is open, and its parent, the postmaster.
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const environs: string[][] = [];
    try {
      const { pid } = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!;
      environs.push(await environOf(pid), await environOf(await parentOf(pid)));
    } finally {
      await client.end();
    }
    for (const environ of environs) {
      const names = environ.map((line) => line.slice(0, line.indexOf("=")));
      expect(names.filter((name) => !["PATH", "TZ", "LANG"].includes(name) && !name.startsWith("LC_"))).toEqual([]);
      for (const secret of Object.values(CANARIES)) expect(environ.join("\n")).not.toContain(secret);
    }
    // What a program run by the server sees (as the superuser, who alone may run one).
    const rows = await query(server.adminUrl, "create temporary table env (line text)", "copy env from program 'env'", "select line from env");
    expect(rows.length).toBeGreaterThan(0);
    for (const secret of Object.values(CANARIES)) expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it("is connected to as a role without superuser, CREATEROLE or CREATEDB that owns the service's database", async () => {
    const rows = await query(
      server.url,
      `select current_user as role, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls,
         (select pg_get_userbyid(datdba) from pg_database where datname = current_database()) as owner
       from pg_roles where rolname = current_user`,
    );
    expect(rows).toEqual([
      { role: SERVICE_ROLE, rolsuper: false, rolcreaterole: false, rolcreatedb: false, rolreplication: false, rolbypassrls: false, owner: SERVICE_ROLE },
    ]);
  });

  it("refuses the service's connection COPY to or from a program", async () => {
    const refusal = { code: "42501", message: expect.stringMatching(/permission denied to COPY to or from an external program/) };
    await expect(query(server.url, "copy (select 1) to program 'true'")).rejects.toMatchObject(refusal);
    await expect(query(server.url, "create temporary table env (line text)", "copy env from program 'env'")).rejects.toMatchObject(refusal);
  });

  it("migrates the service's database as that role, which owns every table", async () => {
    const db = await connectDatabase(server.url, { max: 1 });
    try {
      await migrateToLatest(db);
      const { rows } = await sql<{ owner: string }>`select distinct pg_get_userbyid(relowner) as owner from pg_class
        where relnamespace = 'public'::regnamespace`.execute(db);
      expect(rows).toEqual([{ owner: SERVICE_ROLE }]);
    } finally {
      await db.destroy();
    }
  });

  it("hands a database the superuser owned (a cluster from before the role) over to the role at the next start", async () => {
    const database = withDatabase(server.adminUrl, "docpipe");
    await query(database, "alter database docpipe owner to postgres", "create table legacy (id serial primary key, name text)");
    await server.stop();
    server = await start(dir);
    const rows = await query(server.url, "alter table legacy add column note text", "insert into legacy (name) values ('kept') returning id, name, note");
    expect(rows).toEqual([{ id: 1, name: "kept", note: null }]);
    expect(await query(server.url, "select pg_get_userbyid(datdba) as owner from pg_database where datname = current_database()")).toEqual([
      { owner: SERVICE_ROLE },
    ]);
  });

  it("warns at start, naming the fix, when DATABASE_URL connects as a superuser; not for the service's role", async () => {
    const warnings = async (databaseUrl: string) => {
      const lines: { level: number; msg: string }[] = [];
      const log = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
      const database = await openDatabase(loadConfig({ DATABASE_URL: databaseUrl, INTERNAL_TOKEN: "t".repeat(32) }), log);
      await database.close();
      return lines.filter((line) => line.level === 40).map((line) => line.msg);
    };
    expect(await warnings(withDatabase(server.adminUrl, "docpipe"))).toEqual([
      "DATABASE_URL connects as a superuser: SQL that reaches the service could run commands on the database server; connect as a role without SUPERUSER that owns the database (docs/security.md)",
    ]);
    expect(await warnings(server.url)).toEqual([]);
  });
});
