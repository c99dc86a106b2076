import { Kysely, PostgresDialect, type RawBuilder, sql } from "kysely";
import pg from "pg";
import type { Database } from "./schema.ts";
import { storableParameters } from "./storable.ts";

/** What `prepared(name)` and `preparedText` write before the name, in a comment at the start or the end of a statement. */
const PREPARED_MARK = "/* prepared: ";
const COMMENT_END = " */";

/**
 * Marks a hot statement to be prepared once per connection and planned from then on by PostgreSQL's
 * plan cache, instead of parsed and planned on every call (kysely sends unnamed statements only):
 * `sql\`${prepared("name")} select ...\``, or `.modifyEnd(prepared("name"))` for a statement kysely
 * builds. The statement's text must never change for one name (pg refuses a name used for another
 * text), so every value in it must be a parameter, and lists of rows go as arrays (`unnest`): a
 * statement assembled from parts (a run's end with or without its last steps) takes a name per shape.
 */
export function prepared(name: string): RawBuilder<unknown> {
  return sql.raw(preparedMark(name));
}

/**
 * The text of a statement written out in full (`$1`, `$2`, ... for its parameters), marked as
 * `prepared(name)` marks one: for the hottest statements, run with `db.executeQuery(CompiledQuery.raw(text,
 * parameters))`. Kysely then compiles nothing per call, and pg's check that a name keeps its text
 * compares one string with itself.
 */
export function preparedText(name: string, text: string): string {
  return `${preparedMark(name)}\n${text}`;
}

function preparedMark(name: string): string {
  if (!/^\w+$/.test(name)) throw new Error(`a prepared statement's name is letters, digits and _: ${JSON.stringify(name)}`);
  return `${PREPARED_MARK}${name}${COMMENT_END}`;
}

/** The name a statement is marked with by `prepared` or `preparedText`, or undefined to send it unnamed. */
function preparedName(text: string): string | undefined {
  const at = text.startsWith(PREPARED_MARK) ? 0 : text.endsWith(COMMENT_END) ? text.lastIndexOf(PREPARED_MARK) : -1;
  if (at === -1) return undefined;
  return text.slice(at + PREPARED_MARK.length, text.indexOf(COMMENT_END, at));
}

/**
 * A pg client that makes every string parameter storable (see storableParameters) and sends
 * statements marked by `prepared` or `preparedText` as named, prepared statements. Here rather than in a kysely
 * plugin: a plugin rebuilds each statement's whole operation tree to reach its values.
 *
 * A query asked for as a promise (as kysely asks) is sent with a callback made here, and the
 * promise made here too. pg's own promise form writes `query.callback = (err, res) => …`, and V8
 * allocates a function written as a property's value in the old generation: that callback then
 * holds its promise, and through it the whole request awaiting the query, past every young
 * collection until a full one. Each query promoted its caller's objects (bench/README.md,
 * 2026-12-07, sixth session); a callback passed as an argument is allocated young.
 */
class PreparingClient extends pg.Client {
  // Typed loosely: it takes every one of pg's overloads; only the promise form is sent differently.
  override query(config: any, values?: any, callback?: any): any {
    if (Array.isArray(values)) values = storableParameters(values);
    const name = typeof config === "string" ? preparedName(config) : undefined;
    if (name !== undefined) {
      // A named statement goes as a config object, with its values in it.
      if (typeof values === "function") [callback, values] = [values, undefined];
      config = { name, text: config, values };
      values = undefined;
    }
    // A callback of the caller's own (an argument, or a config object's `callback`) or a submittable: as pg takes it.
    if (config == null || typeof config.submit === "function" || config.callback || typeof values === "function" || callback !== undefined) {
      return super.query(config, values, callback);
    }
    return new Promise((resolve, reject) => {
      super.query(config, values, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
    });
  }
}

export interface PoolOptions {
  /** Connections in the pool. */
  max?: number;
  /** How long to wait for a connection before the query fails (ms); keeps outages from hanging requests. */
  connectTimeoutMs?: number;
}

/** Each database's pool, for its counters (see poolStats). */
const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/** Connections open, idle, and queries waiting for one, in the pool behind `db`; undefined for a database not opened here. */
export function poolStats(db: Kysely<Database>): { total: number; idle: number; waiting: number } | undefined {
  const pool = pools.get(db);
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

/** Opens a pool on `url` and checks that the server answers; the error names the server, never the password. */
export async function connectDatabase(url: string, options: PoolOptions = {}): Promise<Kysely<Database>> {
  const pool = new pg.Pool({
    Client: PreparingClient,
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
  pools.set(db, pool);
  try {
    await pingDatabase(db);
  } catch (error) {
    await db.destroy();
    throw new Error(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  }
  return db;
}

/** Resolves once the server answers a trivial query; rejects when it cannot (readiness checks). */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Whether the pool's role is a superuser (which may run programs on the server's machine). */
export async function connectedAsSuperuser(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ superuser: boolean }>`select current_setting('is_superuser') = 'on' as superuser`.execute(db);
  return rows[0]!.superuser;
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    // libpq and pg also take the password (and a client key's passphrase) from the query.
    for (const name of [...parsed.searchParams.keys()]) {
      if (/password/i.test(name)) parsed.searchParams.set(name, "***");
    }
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}
