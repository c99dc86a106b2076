import type { Kysely } from "kysely";
import { afterAll, inject } from "vitest";
import { connectDatabase } from "../../src/db/connection.ts";
import type { Database } from "../../src/db/schema.ts";

/** A pool on the test run's database, closed after the file's tests. */
export async function testDatabase(): Promise<Kysely<Database>> {
  const db = await connectDatabase(inject("databaseUrl"), { max: 4 });
  afterAll(() => db.destroy());
  return db;
}
