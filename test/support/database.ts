import type { Kysely } from "kysely";
import { inject } from "vitest";
import { connectDatabase } from "../../src/db/connection.ts";
import type { Database } from "../../src/db/schema.ts";
import { afterFile } from "./after-file.ts";

/** A pool on the test run's database, closed after the file's tests. */
export async function testDatabase(): Promise<Kysely<Database>> {
  const db = await connectDatabase(inject("databaseUrl"), { max: 4 });
  afterFile(() => db.destroy());
  return db;
}
