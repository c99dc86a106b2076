import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { migrateToLatest } from "../src/db/migrate.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The PostgreSQL server of this test run, on a database to connect to as an administrator (never the template). */
    databaseServerUrl: string;
    /** A database migrated once for this test run; each test file clones it (test/support/database.ts). */
    templateDatabase: string;
  }
}

/**
 * Migrates one template database per test run; each test file that needs a database gets a clone of
 * it (`create database ... template ...`, a file copy), dropped after the file. Files never see each
 * other's rows. DATABASE_URL picks the server; without it an embedded PostgreSQL runs from
 * .data/test-postgres.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dir: resolve(".data/test-postgres"),
        port: Number(process.env.EMBEDDED_POSTGRES_TEST_PORT ?? 54330),
        database: "postgres",
        log: () => {},
        warn: (message) => console.warn(message),
      });
  const serverUrl = process.env.DATABASE_URL ?? embedded!.url;
  const template = `docpipe_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const url = new URL(serverUrl);
  url.pathname = `/${template}`;
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
  await migrateToLatest(db);
  // Closed before any clone: PostgreSQL copies a template only while nobody is connected to it.
  await db.destroy();
  project.provide("databaseServerUrl", serverUrl);
  project.provide("templateDatabase", template);

  return async () => {
    // Clones a crashed file left behind (named after the template), then the template.
    const { rows } = await admin.query<{ datname: string }>("select datname from pg_database where starts_with(datname, $1)", [`${template}_`]);
    for (const { datname } of rows) await admin.query(`drop database if exists ${datname} with (force)`);
    await admin.query(`drop database if exists ${template} with (force)`);
    await admin.end();
    await embedded?.stop();
  };
}
