import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll } from "vitest";
import { loadConfig } from "../../src/platform/config.ts";
import type { Database } from "../../src/data/db/schema.ts";
import { closeOcr } from "../../src/documents/parse/ocr.ts";
import { listRunDeliveries } from "../../src/data/repositories/callback-deliveries.ts";
import type { FileStore } from "../../src/data/storage/file-store.ts";
import { startWorkers, type Workers } from "../../src/runs/engine/worker.ts";
import type { Receiver } from "../callbacks/receiver.ts";
import {
  addFile,
  cancelLeftoverRuns,
  closeSharedTaskPool,
  memoryLog,
  queueRuns,
  sharedTaskPool,
  type Tenant,
  tempStore,
  waitForRuns,
  WORKER_ENV,
} from "../worker/fixtures.ts";
import { testDatabase, testDatabaseUrl } from "./database.ts";
import { sleep } from "./wait.ts";

export interface WorkerBedOptions {
  /** Settings every start adds to WORKER_ENV (and a start's own settings to these). */
  env?: Record<string, string>;
  /** Workers make a task pool of their own, of the settings' size, rather than share the file's (see sharedTaskPool). */
  ownPool?: boolean;
}

/**
 * A test file's worker setting: its database, a file store in a temporary folder, and the workers
 * its tests start, stopped after each test with the runs it left cancelled, so the next test's
 * workers find only that test's runs. Its fields are set once the file's first beforeAll has run.
 */
export interface WorkerBed {
  readonly db: Kysely<Database>;
  readonly store: FileStore;
  readonly databaseUrl: string;
  /** Starts workers on the file's database; what they log is kept in the returned log. */
  start(env?: Record<string, string>): ReturnType<typeof memoryLog>;
  /** The workers started and not yet stopped, the last started last. */
  readonly running: Workers[];
  /** Stops the workers started so far (each test's are stopped after it). */
  stop(): Promise<void>;
  /** Stores a document and queues one run of the pipe on it; its run id. */
  submit(tenant: Tenant, pipeId: string, name: string, format: string, bytes: Buffer): Promise<string>;
  /** Waits for the runs' statuses with a deadline meant for a shared machine (met in far less when it is idle). */
  until(runIds: string[], statuses?: Parameters<typeof waitForRuns>[2]): ReturnType<typeof waitForRuns>;
  /**
   * The callback bodies `receiver` got for a run, once the run's deliveries (sent by the delivery
   * queue after the run ended) have all been attempted; none when the run queued no delivery.
   */
  deliveriesOf(receiver: Receiver, runId: string): Promise<Record<string, unknown>[]>;
}

/** Sets up the file's worker bed (call it at the top of a test file: it adds the file's hooks). */
export function workerBed(options: WorkerBedOptions = {}): WorkerBed {
  const running: Workers[] = [];
  const bed = { running } as { -readonly [K in keyof WorkerBed]: WorkerBed[K] };
  beforeAll(async () => {
    bed.db = await testDatabase();
    bed.databaseUrl = await testDatabaseUrl();
    const temp = await tempStore();
    bed.store = temp.store;
    return temp.remove;
  });
  afterAll(closeOcr);
  afterAll(closeSharedTaskPool);
  afterEach(async () => {
    await bed.stop();
    await cancelLeftoverRuns(bed.db);
  });
  bed.start = (env = {}) => {
    const log = memoryLog();
    const config = loadConfig({ ...WORKER_ENV, ...options.env, ...env });
    const pool = options.ownPool === true ? undefined : sharedTaskPool();
    running.push(startWorkers({ db: bed.db, databaseUrl: bed.databaseUrl, config, store: bed.store, log, ...(pool === undefined ? {} : { pool }) }));
    return log;
  };
  bed.stop = async () => {
    await Promise.all(running.splice(0).map((workers) => workers.stop()));
  };
  bed.submit = async (tenant, pipeId, name, format, bytes) => {
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, name, format, bytes));
    return runId!;
  };
  bed.until = (runIds, statuses) => waitForRuns(bed.db, runIds, statuses, 60_000);
  bed.deliveriesOf = async (receiver, runId) => {
    const deadline = Date.now() + 30_000;
    while ((await listRunDeliveries(bed.db, runId)).some((delivery) => delivery.status === "pending")) {
      if (Date.now() > deadline) throw new Error(`the deliveries of run ${runId} are still pending`);
      await sleep(50);
    }
    return receiver.deliveries.map((delivery) => JSON.parse(delivery.body)).filter((body) => body.runId === runId);
  };
  return bed;
}
