import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import pg from "pg";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { loadConfig } from "../../src/platform/config.ts";
import { connectDatabase } from "../../src/data/db/connection.ts";
import { migrateToLatest } from "../../src/data/db/migrate.ts";
import { RunsQueuedNotifier } from "../../src/data/db/run-notifications.ts";
import type { Database } from "../../src/data/db/schema.ts";
import { PageTokens } from "../../src/api/pagination.ts";
import { createServices, serviceRoutes } from "../../src/api/routes.ts";
import { inProcessAccess } from "../../src/inbound/rpc/interceptors.ts";
import { pino } from "pino";

/** The server the benchmarks make their throwaway databases on. */
const SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * An unlimited plan, so the rate limiter never refuses benchmark load (its hook still runs); room for
 * 200 MB pipes; and a queued-runs cap above what a bench's tenant piles up (the benches run no worker,
 * so every run they submit stays queued: the 10,000 default refused the later rounds' submissions).
 */
export const BENCH_ENV = { PLANS: JSON.stringify({ unlimited: 0 }), MAX_SIZE_MB_LIMIT: "200", MAX_QUEUED_RUNS_PER_ORGANIZATION: "1000000" };
export const BENCH_PLAN = "unlimited";

export interface BenchDatabase {
  url: string;
  db: Kysely<Database>;
  /** The services over this database, in this process: for setting up tenants and checking rows. */
  clients: ServiceClients;
  drop(): Promise<void>;
}

function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(serverUrl: string, use: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.end();
  }
}

/** A new, migrated database on `serverUrl`; drop() removes it, whoever is still connected. */
export async function createBenchDatabase(serverUrl = SERVER_URL): Promise<BenchDatabase> {
  const name = `docpipe_bench_${randomBytes(4).toString("hex")}`;
  await withAdmin(serverUrl, (admin) => admin.query(`create database ${name}`));
  const url = databaseUrl(serverUrl, name);
  const db = await connectDatabase(url, { max: 4 });
  await migrateToLatest(db);
  const deps = { db, config: loadConfig(BENCH_ENV), pageTokens: new PageTokens(undefined), runsQueued: new RunsQueuedNotifier(db), now: () => new Date() };
  return {
    url,
    db,
    clients: createServiceClients(createDirectTransport(serviceRoutes(createServices(deps), inProcessAccess(pino({ level: "silent" }))))),
    drop: async () => {
      await db.destroy();
      await withAdmin(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
    },
  };
}
