import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import pg from "pg";
import { inject } from "vitest";
import { connectDatabase } from "../../src/data/db/connection.ts";
import type { Database } from "../../src/data/db/schema.ts";
import { withDatabase } from "../../src/data/db/service-role.ts";
import { ownerClause } from "./database-owner.ts";

let clone: Promise<string> | undefined;
let name: string | undefined;
const pools: Kysely<Database>[] = [];

/** Runs `query` on a connection of its own to the server's administration database. */
async function administer(query: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject("databaseServerUrl") });
  await admin.connect();
  try {
    await admin.query(query);
  } finally {
    await admin.end();
  }
}

/**
 * The URL of this test file's own database: a clone of the run's migrated template, made on first
 * use and dropped after the file's tests (by test/support/per-file.ts, the setup file of every test file).
 */
export function testDatabaseUrl(): Promise<string> {
  clone ??= (async () => {
    const template = inject("templateDatabase");
    name = `${template}_${randomBytes(4).toString("hex")}`;
    await administer(`create database ${name} template ${template}${ownerClause(inject("databaseRoleUrl"))}`);
    return withDatabase(inject("databaseRoleUrl"), name);
  })();
  return clone;
}

/** A pool on this test file's database, closed with it after the file's tests. */
export async function testDatabase(): Promise<Kysely<Database>> {
  const db = await connectDatabase(await testDatabaseUrl(), { max: 4 });
  pools.push(db);
  return db;
}

/** Closes the file's pools and drops its database: after every test file (test/support/per-file.ts). */
export async function dropTestDatabase(): Promise<void> {
  await Promise.all(pools.splice(0).map((db) => db.destroy()));
  if (clone === undefined) return;
  await clone.catch(() => {});
  clone = undefined;
  // Not waited for: the next file needs nothing from it, and test/global-setup.ts drops whatever a
  // drop still under way when the run ends left behind.
  const dropped = name;
  if (dropped !== undefined) {
    administer(`drop database if exists ${dropped} with (force)`).catch((error: unknown) =>
      console.warn(`could not drop the test database ${dropped}; the run's end drops it: ${(error as Error).message}`),
    );
  }
}
