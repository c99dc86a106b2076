import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { lazySecretBox } from "../deliveries/secret-box.ts";
import type { Config } from "../../platform/config.ts";
import { startDeliveryQueue } from "../deliveries/delivery-queue.ts";
import { SpanKind } from "@opentelemetry/api";
import { listenForRuns, notifyRunsQueued } from "../../data/db/run-notifications.ts";
import type { Db } from "../../data/db/schema.ts";
import type { Metrics } from "../../platform/observability/metrics.ts";
import { contextOfTraceparent, inSpan } from "../../platform/observability/tracing.ts";
import { failedRunWrites } from "../nodes/callback/failed-run.ts";
import { createMailer } from "../nodes/email/email.ts";
import { TaskPool } from "../../documents/pool/task-pool.ts";
import { poolSelfCheck } from "./pool-self-check.ts";
import {
  type Claim,
  claimRun,
  finishRun,
  finishRunLeasingDeliveries,
  pauseRunForReview,
  type RunEndWrites,
  releaseRun,
  renewLease,
} from "../../data/repositories/run-leases.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";
import { type ExecutionContext, executeRun } from "./execute.ts";
import type { WorkerLog } from "../../platform/worker-log.ts";
import { sweepExpiredRuns } from "./retention.ts";
import { decideExpiredReviews } from "./review-timeouts.ts";
import { Wake } from "../../platform/wake.ts";

/** How often expired reviews are looked for. */
const REVIEW_SWEEP_MS = 60_000;
/** How often runs past their pipe's retention are deleted; retention is counted in days. */
const RETENTION_SWEEP_MS = 60 * 60_000;

export interface StartWorkersOptions {
  db: Db;
  /** The same database, for a dedicated LISTEN connection (instant wake-ups). */
  databaseUrl: string;
  config: Config;
  store: DocumentStore;
  log: WorkerLog;
  /** Runs finished, their durations, steps and callbacks; absent in tests that do not look. */
  metrics?: Metrics | undefined;
  /**
   * A task pool the caller owns and closes, shared by several starts (tests start workers many
   * times on one pool); by default the workers make their own from the settings and end it on stop.
   */
  pool?: TaskPool | undefined;
}

export interface Workers {
  /** This process's worker id: the lease owner of each run it holds is `<id>:<uuid of that claim>`. */
  readonly id: string;
  /** Resolves once the parse pool has parsed a built-in sample; rejects with a NotReadyError saying why not (src/runs/engine/pool-self-check.ts). */
  ready(): Promise<void>;
  /** Stops claiming, aborts the step in flight (ending its parse), gives unfinished runs back to the queue; resolves when done. */
  stop(): Promise<void>;
}

/**
 * Starts WORKER_CONCURRENCY slots that each claim a run (fairly across organizations, see claimRun),
 * execute it and claim the next; idle slots wake on a queued-run notification or every
 * WORKER_POLL_MS. Beside them, the callback delivery queue with its own CALLBACK_CONCURRENCY slots.
 */
export function startWorkers(options: StartWorkersOptions): Workers {
  const { db, config, log, metrics } = options;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  const wake = new Wake();
  const deliveries = startDeliveryQueue({
    db,
    concurrency: config.callbackConcurrency,
    backoffMs: config.callbackBackoffMs,
    allowPrivateNetworks: config.callbackAllowPrivateNetworks,
    secretBox: lazySecretBox(config),
    pollMs: config.workerPollMs,
    log,
    metrics,
  });
  const context: ExecutionContext = {
    db,
    store: options.store,
    outbound: {
      allowPrivateNetworks: config.callbackAllowPrivateNetworks,
      backoffMs: config.callbackBackoffMs,
      secretBox: lazySecretBox(config),
      mailer: config.smtpUrl === undefined ? undefined : createMailer(config.smtpUrl),
      mailFrom: config.smtpFrom,
      log,
    },
    pool: options.pool ?? taskPoolOf(config, (message) => log.warn({}, message)),
    splitMaxParts: config.splitMaxParts,
    maxQueuedRunsPerOrganization: config.maxQueuedRunsPerOrganization,
    metrics,
  };
  /** Counts a run that reached its final status here. */
  const finished = (run: Claim["run"], status: "completed" | "failed", reason: string) => {
    if (metrics === undefined) return;
    if (status === "completed") metrics.runsCompleted.inc();
    else metrics.runsFailed.inc({ reason });
    metrics.runDuration.observe({ status }, Math.max(0, Date.now() - run.create_time.getTime()) / 1000);
  };
  /** The run id of each run in progress, by what stops it (a run taken over by another slot of this process is held twice). */
  const inProgress = new Map<AbortController, string>();
  const cancelled = (runId: string) => {
    for (const [stop, id] of inProgress) if (id === runId) stop.abort();
  };
  const listener = listenForRuns(options.databaseUrl, { queued: () => wake.notify(), cancelled }, log);

  // The run's span belongs to the trace of the submission that created it (its traceparent is on the row).
  const runClaimed = (claim: Claim) =>
    inSpan(
      "run",
      {
        kind: SpanKind.CONSUMER,
        parent: contextOfTraceparent(claim.run.trace_parent),
        attributes: { "docpipe.run.id": claim.run.id, "docpipe.run.attempt": claim.run.attempts },
      },
      () => executeClaimed(claim),
    );

  const executeClaimed = async ({ run, lease }: Claim) => {
    // Past its attempts a run fails, and its callbacks report it (one more attempt, running nothing
    // else); if that attempt stopped too, the run fails without them.
    const abandoned =
      run.attempts > config.runMaxAttempts
        ? `the run was abandoned after ${config.runMaxAttempts} attempts: each worker that took it stopped before finishing`
        : undefined;
    if (abandoned !== undefined) log.warn({ runId: run.id, attempts: run.attempts - 1 }, "run abandoned");
    if (abandoned !== undefined && run.attempts > config.runMaxAttempts + 1) {
      try {
        if (await endRun(run, lease, "failed", abandoned, 0)) finished(run, "failed", "abandoned");
      } catch (failure) {
        log.error({ err: failure, runId: run.id }, "failing an abandoned run broke off; it is retried when its lease expires");
      }
      return;
    }
    // Stops the run when the worker stops (even if that happened just before this line), the lease is
    // lost, or the run is cancelled (announced at once; a renewal would find it too).
    const leaseLost = new AbortController();
    inProgress.set(leaseLost, run.id);
    const signal = AbortSignal.any([stopping.signal, leaseLost.signal]);
    const renewal = setInterval(
      () => {
        renewLease(db, lease, config.runLeaseSeconds).then(
          (stillHeld) => stillHeld || leaseLost.abort(),
          (error: unknown) => log.warn({ err: error, runId: run.id }, "renewing a run lease failed"),
        );
      },
      (config.runLeaseSeconds * 1000) / 3,
    );
    try {
      const outcome = await executeRun(context, run, lease, signal, abandoned);
      if (outcome.status === "stopped") {
        if (stopping.signal.aborted) await releaseRun(db, lease);
        log.info({ runId: run.id }, stopping.signal.aborted ? "run released: worker stopping" : "run stopped: cancelled or taken over");
        return;
      }
      if (outcome.status === "review") {
        if (await pauseRunForReview(db, lease, outcome.writes)) log.info({ runId: run.id }, "run waits for a review");
        return;
      }
      if (outcome.status === "awaiting_children") {
        log.info({ runId: run.id }, "run waits for its child runs");
        return;
      }
      const error = outcome.status === "failed" ? outcome.error : "";
      if (await endRun(run, lease, outcome.status, error, outcome.deliveries, outcome.writes)) {
        finished(run, outcome.status, outcome.status === "failed" ? outcome.reason : "");
        log.info({ runId: run.id, status: outcome.status, error }, "run finished");
      }
    } catch (error) {
      log.error({ err: error, runId: run.id }, "run execution broke off; it is retried when its lease expires");
    } finally {
      clearInterval(renewal);
      inProgress.delete(leaseLost);
    }
  };

  /**
   * Writes the run's end; false when the run is no longer ours. A failing run's callbacks report the
   * failure (see failedRunWrites). Its deliveries are due once it has ended: those its end writes
   * are leased to this process and attempted at once when the delivery queue has room, the others
   * (written with an earlier step, or no room) each wake a queue slot.
   */
  const endRun = async (run: Claim["run"], lease: Claim["lease"], status: "completed" | "failed", error: string, due: number, given: RunEndWrites = {}) => {
    const writes = status === "failed" ? await failedRunWrites(db, run.id, error, given) : given;
    const written = writes.deliveries ?? [];
    const first = written.length === 0 ? undefined : deliveries.reserve(written.length);
    let ended = false;
    if (first === undefined) ended = await finishRun(db, lease, status, error, writes);
    else {
      try {
        const leased = await finishRunLeasingDeliveries(db, lease, status, error, { ...writes, deliveries: written }, first.owner);
        if (leased !== undefined) first.send(run, written, leased);
        ended = leased !== undefined;
      } finally {
        first.cancel();
      }
    }
    if (ended) for (let n = first === undefined ? due : due - written.length; n > 0; n--) deliveries.wake();
    return ended;
  };

  const slot = async () => {
    while (!stopping.signal.aborted) {
      const generation = wake.generation;
      let claim: Awaited<ReturnType<typeof claimRun>>;
      try {
        claim = await claimRun(db, { workerId, leaseSeconds: config.runLeaseSeconds, maxSlotsPerOrganization: config.maxSlotsPerOrganization });
      } catch (error) {
        log.error({ err: error }, "claiming a run failed");
      }
      // A concurrent claim filled or emptied the organization this one chose: claim again at once.
      if (claim === "contended") continue;
      if (claim === undefined) await wake.wait(config.workerPollMs, generation);
      else {
        wake.notify(); // there may be more: the next idle slot looks
        await runClaimed(claim);
      }
    }
  };
  const slots = Array.from({ length: config.workerConcurrency }, slot);
  // Reviews time out in hours: a look a minute is soon enough, and cheap (a partial scan of runs in review).
  const sweepReviews = async () => {
    try {
      const decided = await decideExpiredReviews(db, new Date());
      if (decided === 0) return;
      log.info({ decided }, "expired reviews decided");
      // Their runs are queued again: idle workers, here and in other processes, take them now.
      await notifyRunsQueued(db);
    } catch (error) {
      log.warn({ err: error }, "deciding expired reviews failed");
    }
  };
  const reviewSweeper = setInterval(sweepReviews, REVIEW_SWEEP_MS);
  // Each worker process sweeps; concurrent sweeps skip each other's locked rows.
  let retentionSweep: Promise<unknown> = Promise.resolve();
  const sweepRetention = () => {
    retentionSweep = sweepExpiredRuns(db, options.store, metrics).then(
      (removed) => removed.runs > 0 && log.info({ removed }, "runs past their retention deleted"),
      (error: unknown) => log.warn({ err: error }, "deleting runs past their retention failed; retried later"),
    );
  };
  sweepRetention();
  const retentionSweeper = setInterval(sweepRetention, RETENTION_SWEEP_MS);
  log.info({ workerId, concurrency: config.workerConcurrency }, "workers started");

  const poolReady = poolSelfCheck(context.pool);
  return {
    id: workerId,
    ready: poolReady,
    async stop() {
      stopping.abort();
      clearInterval(reviewSweeper);
      clearInterval(retentionSweeper);
      wake.notifyAll();
      // A slot ending its run as the worker stops may still hand the run's deliveries to the queue: it stops after them.
      await Promise.all([...slots, retentionSweep]);
      await deliveries.stop();
      await Promise.all([listener.close(), options.pool === undefined ? context.pool.destroy() : undefined]);
      log.info({ workerId }, "workers stopped");
    },
  };
}

/**
 * The task pool the settings describe: its size, each task's budgets of time and memory, its users;
 * `warn` hears, once, of any confinement this machine does not allow.
 */
export function taskPoolOf(config: Config, warn?: (message: string) => void): TaskPool {
  return new TaskPool({
    size: config.taskPoolSize,
    timeoutMs: config.parseTimeoutMs,
    memoryMb: config.parseMemoryMb,
    recycleMb: config.parseRecycleMb,
    user: config.parseUser,
    warn,
  });
}
