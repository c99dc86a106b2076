import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres } from "../src/db/embedded.ts";
import { migrateToLatest } from "../src/db/migrate.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** A freshly migrated database of its own for this test run. */
    databaseUrl: string;
  }
}

/**
 * One database per test run, migrated once; tests isolate themselves by their own data (each makes
 * its own organization), never by restarting servers. DATABASE_URL picks the server; without it an
 * embedded PostgreSQL runs from .data/test-postgres.
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
  const database = `docpipe_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
  await migrateToLatest(db);
  await db.destroy();
  project.provide("databaseUrl", url.toString());

  return async () => {
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
    await embedded?.stop();
  };
}
