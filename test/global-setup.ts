import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { resolve } from "node:path";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { type EmbeddedServer, SERVICE_ROLE, startEmbeddedPostgres } from "../src/data/db/embedded.ts";
import { migrateToLatest } from "../src/data/db/migrate.ts";
import { withDatabase } from "../src/data/db/service-role.ts";
import { ownerClause } from "./support/database-owner.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server of this test run, on a database to connect to as an administrator (never the template). */
    databaseServerUrl: string;
    /**
     * The same server as the role the tests' databases belong to, which the tests connect as: the
     * embedded server's SERVICE_ROLE (no superuser), or DATABASE_URL's own role.
     */
    databaseRoleUrl: string;
    /** A database migrated once for this test run; each test file clones it (test/support/database.ts). */
    templateDatabase: string;
  }
}

/** Starts of the embedded PostgreSQL tried, each on a port of its own, before the run gives up. */
const EMBEDDED_START_ATTEMPTS = 3;

/** A loopback port nobody listens on now, chosen by the system. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/**
 * The embedded PostgreSQL on EMBEDDED_POSTGRES_TEST_PORT, or else on a free port the system picks,
 * tried again on another if it cannot start. A fixed port sits in Linux's range for outgoing
 * connections (32768-60999), and on a busy machine one of them may hold it: CI once failed so.
 */
async function startTestPostgres(): Promise<EmbeddedServer> {
  const fixedPort = process.env.EMBEDDED_POSTGRES_TEST_PORT;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEmbeddedPostgres({
        dir: resolve(".data/test-postgres"),
        port: fixedPort === undefined ? await freePort() : Number(fixedPort),
        database: SERVICE_ROLE,
        log: () => {},
        warn: (message) => console.warn(message),
        // A cluster thrown away after the run: its commits need not wait for the disk (5 ms an fsync on a slow one).
        settings: { fsync: "off", synchronous_commit: "off", full_page_writes: "off" },
      });
    } catch (error) {
      if (fixedPort !== undefined || attempt >= EMBEDDED_START_ATTEMPTS) throw error;
      console.warn(`the embedded PostgreSQL did not start (${(error as Error).message}); trying another port`);
    }
  }
}

/**
 * Migrates one template database per test run; each test file that needs a database gets a clone of
 * it (`create database ... template ...`, a file copy), dropped after the file. Files never see each
 * other's rows. DATABASE_URL picks the server; without it an embedded PostgreSQL runs from
 * .data/test-postgres.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const embedded = process.env.DATABASE_URL ? undefined : await startTestPostgres();
  const serverUrl = process.env.DATABASE_URL ?? embedded!.adminUrl;
  const roleUrl = process.env.DATABASE_URL ?? embedded!.url;
  const template = `docpipe_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  // Owned, and migrated, by the role: its clones' tables are that role's, as the service's are.
  await admin.query(`create database ${template}${ownerClause(roleUrl)}`);
  const url = withDatabase(roleUrl, template);
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  await migrateToLatest(db);
  // Closed before any clone: PostgreSQL copies a template only while nobody is connected to it.
  await db.destroy();
  project.provide("databaseServerUrl", serverUrl);
  project.provide("databaseRoleUrl", roleUrl);
  project.provide("templateDatabase", template);

  return async () => {
    // Clones a crashed file left behind, or whose drop (not waited for, see dropTestDatabase) was
    // still under way (named after the template), then the template.
    const { rows } = await admin.query<{ datname: string }>("select datname from pg_database where starts_with(datname, $1)", [`${template}_`]);
    for (const { datname } of rows) await admin.query(`drop database if exists ${datname} with (force)`);
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.end();
    await embedded?.stop();
  };
}
