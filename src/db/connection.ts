import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { Database } from "./schema.ts";

export interface PoolOptions {
  /** Connections in the pool. */
  max?: number;
  /** How long to wait for a connection before the query fails (ms); keeps outages from hanging requests. */
  connectTimeoutMs?: number;
}

/** Opens a pool on `url` and checks that the server answers; the error names the server, never the password. */
export async function connectDatabase(url: string, options: PoolOptions = {}): Promise<Kysely<Database>> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  // A connection dropping (a server restart) must not crash the process. The pool reports idle
  // clients' errors; a checked-out client between two queries (inside a transaction) emits its own,
  // which nobody would handle. Either way the next query fails and the pool discards the client.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy();
    throw new Error(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  return db;
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}
