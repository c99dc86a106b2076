import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sealStoredCallbackHeaders } from "../api/sealed-headers-migration.ts";
import { lazySecretBox } from "../runs/deliveries/secret-box.ts";
import { clientInterceptors, createServiceClients, remoteTransport } from "../api/clients.ts";
import { createDirectTransport } from "../api/direct-transport.ts";
import type { Config } from "../platform/config.ts";
import { pingDatabase, poolStats } from "../data/db/connection.ts";
import { type OpenDatabase, openDatabase } from "../data/db/open.ts";
import { RunsQueuedNotifier } from "../data/db/run-notifications.ts";
import { demoBanner, seedDemo } from "./demo.ts";
import { buildApp } from "../inbound/http/app.ts";
import { connectSharedCounters } from "../inbound/http/shared-counters.ts";
import { CONSOLE_PATH, consoleHandler, loadConsole } from "../inbound/rpc/console.ts";
import { inProcessAccess, internalAccess } from "../inbound/rpc/interceptors.ts";
import { runDocumentsHandler } from "../inbound/rpc/run-documents.ts";
import { testRunsHandler } from "../inbound/rpc/test-runs.ts";
import { startInternalServer } from "../inbound/rpc/server.ts";
import { withSingleSignOn } from "../inbound/rpc/single-sign-on-routes.ts";
import { type Logger, oneLine } from "../platform/logger.ts";
import { startMetricsServer } from "../platform/observability/metrics-endpoint.ts";
import { createMetrics, type Metrics, observeProcess } from "../platform/observability/metrics.ts";
import { queueStats } from "../data/repositories/run-queue.ts";
import { PageTokens } from "../api/pagination.ts";
import { referencedDocuments } from "../data/repositories/files.ts";
import { removeExpiredAuthRecords } from "../api/auth-retention.ts";
import { createServices, serviceRoutes } from "../api/routes.ts";
import type { DocumentStore } from "../data/storage/document-store.ts";
import { openDocumentStore } from "../data/storage/open-store.ts";
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from "../data/storage/sweep-orphans.ts";
import { missingCollectionFlags, YOUNG_COLLECTION_BYTES, YoungCollections } from "../data/storage/young-collections.ts";

const ORPHAN_SWEEP_INTERVAL_MS = 10 * 60_000;

/** Start-up could not complete; the message is one line for the operator, naming the setting at fault when there is one. */
class StartupError extends Error {
  override name = "StartupError";
}

export interface Running {
  /** Where the public edge listens, when this process runs it. */
  edgePort: number | undefined;
  /** Where the internal Connect services listen, when this process runs them. */
  internalPort: number | undefined;
  /** Where the email trigger's SMTP server listens, when this process runs one. */
  emailPort: number | undefined;
  /** Where METRICS_PORT's server listens, when this process has one. */
  metricsPort: number | undefined;
  /** This process's metrics (served at /metrics); undefined with METRICS_ENABLED=false. */
  metrics: Metrics | undefined;
  /** Stops accepting, finishes in-flight work, hands runs back, closes everything. */
  stop(): Promise<void>;
}

/** What each role needs; anything not needed is neither opened nor started. */
export function needs(config: Pick<Config, "roles" | "servicesUrl" | "databaseUrl" | "storageUrl" | "signingSecretsKey">) {
  const { roles } = config;
  /** The services run here: as a role, or for an edge or email trigger that has no SERVICES_URL to call. */
  const services = roles.has("services") || ((roles.has("edge") || roles.has("email")) && config.servicesUrl === undefined);
  const database = services || roles.has("worker");
  const store = roles.has("edge") || roles.has("email") || roles.has("worker");
  return {
    database,
    services,
    store,
    /** DATA_DIR holds the embedded cluster, the S3 store's staging and the signing-secret key file. */
    dataDir:
      (database && config.databaseUrl === undefined) || (store && config.storageUrl !== undefined) || (database && config.signingSecretsKey === undefined),
  };
}

/**
 * Starts what the configured roles need, in order: the database (embedded or DATABASE_URL,
 * migrated), the internal services, the document store, the edge and the workers. A failure
 * undoes what was started and rejects with a StartupError. The workers, the email server and the S3
 * client are loaded only by a process that runs them: an edge's heap holds no parsing or mail
 * libraries, and every byte of heap is marked again by each full garbage collection.
 */
export async function start(config: Config, log: Logger): Promise<Running> {
  const need = needs(config);
  const undo: (() => Promise<void>)[] = [];
  const step = async <T>(setting: string | undefined, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      for (const close of undo.reverse()) await close().catch(() => {});
      const message = oneLine(error);
      throw new StartupError(setting === undefined ? message : `${setting}: ${message}`, { cause: error });
    }
  };

  if (need.dataDir) await step(`DATA_DIR ${config.dataDir}`, () => checkWritable(config.dataDir));
  const database: OpenDatabase | undefined = need.database ? await step(undefined, () => openDatabase(config, log)) : undefined;
  if (database) undo.push(() => database.close());

  /**
   * Ready: the database answers (a process without one is ready when it listens), and once the
   * workers have started, their parse pool has parsed its sample.
   */
  let poolReady: (() => Promise<void>) | undefined;
  const processReady = async () => {
    if (database) await pingDatabase(database.db);
    await poolReady?.();
  };

  const metrics = config.metricsEnabled ? createMetrics() : undefined;
  if (metrics) observeProcess(metrics, { queue: database && (() => queueStats(database.db)), pool: database && (() => poolStats(database.db)) });
  const metricsEndpoint = metrics && { registry: metrics.registry, token: config.internalToken };

  const runsQueued = need.services && database ? new RunsQueuedNotifier(database.db) : undefined;
  if (runsQueued) undo.push(() => runsQueued.close());
  const services =
    database && runsQueued
      ? createServices({ db: database.db, config, pageTokens: new PageTokens(config.pageTokenSecret), runsQueued, now: () => new Date(), metrics })
      : undefined;

  if (services && database && config.roles.has("services")) {
    const sealed = await step("sealing stored callback headers", async () => sealStoredCallbackHeaders(database.db, await lazySecretBox(config)()));
    if (sealed > 0) log.info({ pipelineVersions: sealed }, "callback headers stored before sealing are now sealed");
  }

  // The settings console, served beside the services; edgeUrl (its trigger URLs) is known once the edge
  // listens, and runs' documents can be read once the store is open (in a process that has one).
  let edgeUrl: string | undefined;
  let documentStore: DocumentStore | undefined;
  const internal =
    services && config.roles.has("services")
      ? await step(`INTERNAL_PORT ${config.internalPort}`, async () =>
          startInternalServer(serviceRoutes(services, internalAccess(log, config)), {
            host: config.internalHost,
            port: config.internalPort,
            allowedHosts: config.internalAllowedHosts,
            fallback: withSingleSignOn(
              services.singleSignOn,
              config.sessionCookieSecure || config.oidc?.redirectUrl.startsWith("https:") === true,
              log,
              runDocumentsHandler(
                services.runDocuments,
                () => documentStore,
                testRunsHandler(
                  services.testRuns,
                  () => documentStore,
                  consoleHandler(await loadConsole(), () => ({
                    edgeUrl,
                    singleSignOn: services.singleSignOn !== undefined,
                    emailDomain: config.emailPort === undefined ? undefined : config.emailDomain,
                  })),
                ),
              ),
            ),
            metrics: metricsEndpoint,
          }),
        )
      : undefined;
  if (internal) {
    undo.push(() => internal.close(0));
    log.info({ host: config.internalHost, port: internal.port, console: CONSOLE_PATH }, "internal Connect services listening");
  }

  // A process without the internal port (worker-only, edge-only) serves its metrics and health here.
  const metricsServer =
    !internal && config.metricsPort !== undefined && metricsEndpoint
      ? await step(`METRICS_PORT ${config.metricsPort}`, () =>
          startMetricsServer({
            ...metricsEndpoint,
            host: config.internalHost,
            port: config.metricsPort!,
            allowedHosts: config.internalAllowedHosts,
            ready: processReady,
          }),
        )
      : undefined;
  if (metricsServer) {
    undo.push(() => metricsServer.close());
    log.info({ host: config.internalHost, port: metricsServer.port }, "metrics listening");
  }

  // Only the edge and the demo seeding call the services; a worker-only process has no clients.
  const clients =
    services && config.servicesUrl === undefined
      ? createServiceClients(createDirectTransport(serviceRoutes(services, inProcessAccess(log)), clientInterceptors("in-process")))
      : config.servicesUrl === undefined
        ? undefined
        : createServiceClients(remoteTransport(config.servicesUrl, config.triggerToken ?? config.internalToken));

  const missingFlags = missingCollectionFlags(process.execArgv, globalThis.gc);
  if (need.store && missingFlags.length > 0) {
    log.warn(
      `started without ${missingFlags.join(" and ")}: V8 frees the buffers uploads arrive in late, with full collections under heavy uploads; run it as npm start does (node --expose-gc --no-memory-reducer src/app/main.ts)`,
    );
  }
  const store = need.store
    ? await step(config.storageUrl === undefined ? `STORAGE_DIR ${config.storageDir}` : "STORAGE_URL", async () => {
        // Young collections by the documents' bytes, with `npm start`'s --expose-gc (see YoungCollections).
        const opened = await openDocumentStore(config, new YoungCollections(globalThis.gc, YOUNG_COLLECTION_BYTES));
        await opened.init();
        return opened;
      })
    : undefined;
  if (store) {
    undo.push(() => store.close());
    documentStore = store;
  }

  // Seeded before the edge listens, so that once /readyz answers the demo data is there; its banner
  // is printed once the edge listens too, so that its curl command works as soon as it is pasted.
  const demo = config.seedDemo && services && clients ? await step(undefined, () => seedDemo(clients)) : undefined;

  const redis = config.roles.has("edge") && config.redisUrl !== undefined ? connectSharedCounters(config.redisUrl, log) : undefined;
  if (redis) undo.push(async () => redis.disconnect());

  const edge =
    config.roles.has("edge") && store && clients
      ? await step(undefined, () =>
          buildApp({
            clients,
            store,
            log,
            redis,
            settings: config,
            metrics,
            // Without a database of its own, the edge is ready when it listens: the services answer for theirs.
            ready: processReady,
          }),
        )
      : undefined;
  if (edge) {
    await step(`PORT ${config.port}`, () => edge.listen({ host: config.host, port: config.port }));
    edgeUrl = `http://localhost:${(edge.server.address() as { port: number }).port}`;
    undo.push(() => edge.close());
  }
  if (demo) {
    const consoleUrl = internal && `http://localhost:${internal.port}${CONSOLE_PATH}`;
    process.stdout.write(demoBanner(demo, edgeUrl ?? `http://localhost:${config.port}`, consoleUrl) + "\n");
  }

  // Documents by email: an SMTP server beside the edge, or in a process of its own (the email role),
  // calling the same services and store.
  const email =
    (config.roles.has("edge") || config.roles.has("email")) && config.emailPort !== undefined && store && clients
      ? await step(`EMAIL_PORT ${config.emailPort}`, async () => {
          const { startEmailServer, emailLimitsOf } = await import("../inbound/smtp/email-server.ts");
          return startEmailServer({
            clients,
            store,
            log,
            domain: config.emailDomain,
            host: config.emailHost,
            port: config.emailPort!,
            maxSizeMbLimit: config.maxSizeMbLimit,
            ...emailLimitsOf(config),
          });
        })
      : undefined;
  if (email) {
    undo.push(() => email.close());
    log.info({ host: config.emailHost, port: email.port, domain: config.emailDomain }, "email trigger listening");
  }

  /** Set once stop() is called. */
  let stopping = false;
  const workers =
    config.roles.has("worker") && database && store
      ? await step(undefined, async () =>
          (await import("../runs/engine/worker.ts")).startWorkers({ db: database.db, databaseUrl: database.url, config, store, log, metrics }),
        )
      : undefined;
  if (workers) {
    poolReady = workers.ready;
    // At start, so that a pool that cannot parse is said at once, not at the first run.
    workers.ready().then(
      () => log.info("parse pool self-check passed"),
      (error: unknown) => {
        // A stop that comes while it runs ends it: no fault of the pool.
        if (stopping) log.info("parse pool self-check ended by the stop");
        else log.error({ err: error }, `${(error as Error).message}; /readyz answers 503 until it can`);
      },
    );
  }
  // Workers remove stored documents no run names, and stale staging files; an edge without a worker
  // (its staging is on its own disk with S3 storage) removes its own stale staging files.
  const sweep =
    workers && database && store
      ? () => sweepOrphanFiles((documents) => referencedDocuments(database.db, documents), store)
      : store && (() => store.removeStagedBefore(Date.now() - ORPHAN_GRACE_MS).then((staged) => ({ committed: 0, staged })));
  const runSweep = () => {
    sweep?.().then(
      (removed) => log.info({ removed }, "orphan files swept"),
      (error: unknown) => log.warn({ err: error }, "sweeping orphan files failed; retried later"),
    );
  };
  // Once at start (what a crash left behind), then every ORPHAN_SWEEP_INTERVAL_MS.
  runSweep();
  const sweeper = sweep && setInterval(runSweep, ORPHAN_SWEEP_INTERVAL_MS).unref();

  // Audit events past AUDIT_RETENTION_DAYS and ended sessions go, at start and every hour.
  const forgetOld = () => {
    if (database && config.roles.has("services")) {
      removeExpiredAuthRecords(database.db, config, new Date()).catch((error: unknown) => log.warn({ err: error }, "removing old audit events failed"));
    }
  };
  forgetOld();
  const forgetter = setInterval(forgetOld, 3600_000).unref();

  return {
    edgePort: edge ? (edge.server.address() as { port: number }).port : undefined,
    internalPort: internal?.port,
    emailPort: email?.port,
    metricsPort: metricsServer?.port,
    metrics,
    stop: async () => {
      stopping = true;
      // Both servers end their requests within SHUTDOWN_TIMEOUT_MS (the edge then cuts slow uploads),
      // side by side, so that handing runs back and closing the database fit before the deadline.
      await Promise.all([edge?.close(), internal?.close(config.shutdownTimeoutMs), email?.close()]);
      clearInterval(sweeper);
      clearInterval(forgetter);
      await workers?.stop();
      await metricsServer?.close();
      redis?.disconnect();
      await store?.close();
      await runsQueued?.close();
      await database?.close();
    },
  };
}

/** Creates the folder if needed and proves a file can be written in it (root ignores modes, so asking is not enough). */
async function checkWritable(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const probe = join(dir, `.write-check-${randomUUID()}`);
  await writeFile(probe, "");
  await rm(probe, { force: true });
}
