import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { type Client, createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { TriggerService } from "../gen/docpipe/v1/trigger_service_pb.js";
import { KeyService } from "../gen/docpipe/v1/key_service_pb.js";
import { WorkspaceService } from "../gen/docpipe/v1/workspace_service_pb.js";
import { loadConfig } from "../src/platform/config.ts";
import { connectDatabase } from "../src/data/db/connection.ts";
import { migrateToLatest } from "../src/data/db/migrate.ts";
import { RunsQueuedNotifier } from "../src/data/db/run-notifications.ts";
import type { Database } from "../src/data/db/schema.ts";
import type { ServiceDeps } from "../src/api/deps.ts";
import { TRIGGER_PERMISSION } from "../src/platform/keys/permissions.ts";
import { createServices, serviceRoutes } from "../src/api/routes.ts";
import { inProcessAccess } from "../src/inbound/rpc/interceptors.ts";
import { pino } from "pino";
import { PageTokens } from "../src/api/pagination.ts";
import { median } from "./support/median.ts";

// AuthenticateKey calls per second, in process and over HTTP/2, with 100 and with 100,000 keys in
// the table. Each table size gets its own throwaway database; rounds interleave the sizes and the
// median round counts, so a noisy neighbour on a shared machine skews both sizes alike.

export interface Row {
  name: string;
  value: number;
  unit: string;
}

const TABLE_SIZES = [100, 100_000] as const;
const TRANSPORTS = ["in-process", "HTTP/2"] as const;
/** Keys made through CreateKey and authenticated in turn; the rest of each table is filler. */
const AUTHENTICATED_KEYS = 100;
const CONCURRENCY = 16;
/** Many short rounds rather than a few long ones: a burst of load elsewhere spoils a few samples, not a size. */
const ROUNDS = 20;
const ROUND_MS = 200;
const WARMUP_MS = 500;

interface Setup {
  size: number;
  db: Kysely<Database>;
  keyValues: string[];
  server: Http2Server;
  sessionManager: Http2SessionManager;
  transports: Record<(typeof TRANSPORTS)[number], Transport>;
}

function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Adds keys with unique digests in one statement; they are never authenticated, only make the table big. */
async function insertFillerKeys(db: Kysely<Database>, organizationId: string, count: number): Promise<void> {
  await sql`
    insert into api_keys (id, organization_id, name, digest, hint, permissions, state)
    select gen_random_uuid(), ${organizationId}, 'filler ' || i, sha256(convert_to('filler ' || i, 'UTF8')),
           'dp_…fill', array[${TRIGGER_PERMISSION}], 'active'
    from generate_series(1, ${count}::int) as i`.execute(db);
  await sql`analyze api_keys`.execute(db);
}

async function setUp(admin: pg.Client, serverUrl: string, database: string, size: number): Promise<Setup> {
  await admin.query(`create database ${database}`);
  const db = await connectDatabase(databaseUrl(serverUrl, database), { max: 8 });
  await migrateToLatest(db);
  // Without the 1 s credentials cache: what is measured is the indexed lookup by digest itself.
  const deps: ServiceDeps = {
    db,
    config: loadConfig({ KEY_CACHE_MS: "0" }),
    pageTokens: new PageTokens(undefined),
    runsQueued: new RunsQueuedNotifier(db),
    now: () => new Date(),
  };
  const routes = serviceRoutes(createServices(deps), inProcessAccess(pino({ level: "silent" })));

  const server = createServer(connectNodeAdapter({ routes }));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sessionManager = new Http2SessionManager(baseUrl);
  const transports = {
    "in-process": createRouterTransport(routes),
    "HTTP/2": createConnectTransport({ baseUrl, httpVersion: "2", sessionManager }),
  };

  const workspaces = createClient(WorkspaceService, transports["in-process"]);
  const keys = createClient(KeyService, transports["in-process"]);
  const organizationId = (await workspaces.createOrganization({ name: "bench", plan: "free" })).organization!.id;
  const keyValues: string[] = [];
  for (let i = 0; i < AUTHENTICATED_KEYS; i++) keyValues.push((await keys.createKey({ organizationId, name: `bench ${i}` })).keyValue);
  await insertFillerKeys(db, organizationId, size - AUTHENTICATED_KEYS);
  return { size, db, keyValues, server, sessionManager, transports };
}

async function tearDown(setup: Setup): Promise<void> {
  setup.sessionManager.abort();
  setup.server.close();
  await setup.db.destroy();
}

/** Calls per second over `durationMs`, CONCURRENCY calls in flight, cycling through the keys. */
async function callsPerSecond(client: Client<typeof TriggerService>, keyValues: string[], durationMs: number): Promise<number> {
  let calls = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const worker = async (offset: number) => {
    for (let i = offset; performance.now() < deadline; i += CONCURRENCY) {
      await client.authenticateKey({ keyValue: keyValues[i % keyValues.length]! });
      calls++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, offset) => worker(offset)));
  return calls / ((performance.now() - start) / 1000);
}

export async function benchAuthenticateKey(): Promise<Row[]> {
  const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const databasePrefix = `docpipe_bench_${randomBytes(4).toString("hex")}`;
  const setups: Setup[] = [];
  try {
    for (const size of TABLE_SIZES) setups.push(await setUp(admin, serverUrl, `${databasePrefix}_${size}`, size));
    // Sizes side by side for each transport, so the two measurements a ratio compares are made moments apart.
    const measurements = TRANSPORTS.flatMap((transportName) =>
      setups.map((setup) => ({
        key: `${transportName}|${setup.size}`,
        client: createClient(TriggerService, setup.transports[transportName]),
        keyValues: setup.keyValues,
      })),
    );
    // The warm-up also takes the one last-used write per key out of the measured rounds.
    for (const { client, keyValues } of measurements) await callsPerSecond(client, keyValues, WARMUP_MS);
    const samples = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round runs in reverse order, so drift over time favours no table size.
      for (const { key, client, keyValues } of round % 2 === 0 ? measurements : [...measurements].reverse()) {
        samples.set(key, [...(samples.get(key) ?? []), await callsPerSecond(client, keyValues, ROUND_MS)]);
      }
    }
    const rows: Row[] = [];
    for (const transportName of TRANSPORTS) {
      const [smallSamples, largeSamples] = TABLE_SIZES.map((size) => samples.get(`${transportName}|${size}`)!) as [number[], number[]];
      // The ratio is taken round by round, then the median of those.
      const ratio = median(largeSamples.map((large, round) => large / smallSamples[round]!));
      const [smallKeys, largeKeys] = TABLE_SIZES.map((size) => size.toLocaleString("en-US"));
      rows.push(
        { name: `AuthenticateKey ${transportName}, ${smallKeys} keys`, value: Math.round(median(smallSamples)), unit: "calls/s" },
        { name: `AuthenticateKey ${transportName}, ${largeKeys} keys`, value: Math.round(median(largeSamples)), unit: "calls/s" },
        { name: `AuthenticateKey ${transportName}, ${largeKeys} / ${smallKeys} keys`, value: Math.round(ratio * 1000) / 1000, unit: "ratio" },
      );
    }
    return rows;
  } finally {
    for (const setup of setups) await tearDown(setup);
    for (const size of TABLE_SIZES) await admin.query(`drop database if exists ${databasePrefix}_${size} with (force)`);
    await admin.end();
  }
}

if (import.meta.main) console.table(await benchAuthenticateKey());
