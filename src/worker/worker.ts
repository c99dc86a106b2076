import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import { lazySecretBox } from "../callbacks/secret-box.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/schema.ts";
import type { FileStore } from "../storage/file-store.ts";
import { type Claim, claimRun, finishRun, releaseRun, renewLease } from "./claim.ts";
import { type ExecutionContext, executeRun } from "./execute.ts";
import { listenForQueuedRuns, Wake } from "./wake.ts";

/** The part of a pino logger the workers use. Secrets are never logged. */
export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface StartWorkersOptions {
  db: Kysely<Database>;
  /** The same database, for a dedicated LISTEN connection (instant wake-ups). */
  databaseUrl: string;
  config: Config;
  store: FileStore;
  log: WorkerLog;
  /** Only runs of this organization; for tests sharing one database. Unset: any run. */
  organizationId?: string;
}

export interface Workers {
  /** This process's worker id: the lease owner of each run it holds is `<id>:<uuid of that claim>`. */
  readonly id: string;
  /** Stops claiming, aborts the step in flight, gives unfinished runs back to the queue; resolves when done. */
  stop(): Promise<void>;
}

/**
 * Starts WORKER_CONCURRENCY slots that each claim a run, execute it and claim the next; idle slots
 * wake on a queued-run notification or every WORKER_POLL_MS. Delivery to callbacks is at least once:
 * a run resumed after its worker died redoes the step that was in flight, which may be a callback.
 */
export function startWorkers(options: StartWorkersOptions): Workers {
  const { db, config, log } = options;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  const wake = new Wake();
  const context: ExecutionContext = {
    db,
    store: options.store,
    callbacks: { allowPrivateNetworks: config.callbackAllowPrivateNetworks, backoffMs: config.callbackBackoffMs },
    secretBox: lazySecretBox(config),
  };
  const listener = listenForQueuedRuns(options.databaseUrl, () => wake.notify(), log);

  const runClaimed = async ({ run, lease }: Claim) => {
    if (run.attempts > config.runMaxAttempts) {
      const error = `the run was abandoned after ${config.runMaxAttempts} attempts: each worker that took it stopped before finishing`;
      await finishRun(db, lease, "failed", error);
      log.warn({ runId: run.id, attempts: run.attempts - 1 }, "run abandoned");
      return;
    }
    // Stops the run when the worker stops (even if that happened just before this line) or the lease is lost.
    const leaseLost = new AbortController();
    const signal = AbortSignal.any([stopping.signal, leaseLost.signal]);
    const renewal = setInterval(() => {
      renewLease(db, lease, config.runLeaseSeconds).then(
        (stillHeld) => stillHeld || leaseLost.abort(),
        (error: unknown) => log.warn({ err: error, runId: run.id }, "renewing a run lease failed"),
      );
    }, (config.runLeaseSeconds * 1000) / 3);
    try {
      const outcome = await executeRun(context, run, lease, signal);
      if (outcome.status === "stopped") {
        if (stopping.signal.aborted) await releaseRun(db, lease);
        log.info({ runId: run.id }, stopping.signal.aborted ? "run released: worker stopping" : "run stopped: cancelled or taken over");
        return;
      }
      const error = outcome.status === "failed" ? outcome.error : "";
      if (await finishRun(db, lease, outcome.status, error)) log.info({ runId: run.id, status: outcome.status, error }, "run finished");
    } catch (error) {
      log.error({ err: error, runId: run.id }, "run execution broke off; it is retried when its lease expires");
    } finally {
      clearInterval(renewal);
    }
  };

  const slot = async () => {
    while (!stopping.signal.aborted) {
      const generation = wake.generation;
      let claim: Claim | undefined;
      try {
        claim = await claimRun(db, { workerId, leaseSeconds: config.runLeaseSeconds, organizationId: options.organizationId });
      } catch (error) {
        log.error({ err: error }, "claiming a run failed");
      }
      if (claim === undefined) await wake.wait(config.workerPollMs, generation);
      else await runClaimed(claim);
    }
  };
  const slots = Array.from({ length: config.workerConcurrency }, slot);
  log.info({ workerId, concurrency: config.workerConcurrency }, "workers started");

  return {
    id: workerId,
    async stop() {
      stopping.abort();
      wake.notify();
      await Promise.all(slots);
      await listener.close();
      log.info({ workerId }, "workers stopped");
    },
  };
}
