import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The service's metrics, on a registry of their own (one per process, or per app in tests, so
 * counts never leak between instances). Every label takes a small, fixed set of values: routes,
 * statuses, problem codes, node types, formats, outcomes. Ids (keys, pipes, runs, organizations)
 * are never labels: each would make a time series per customer.
 */
export interface Metrics {
  registry: Registry;
  /** Edge requests by route pattern, HTTP status and problem code ("none" for a success). */
  edgeRequests: Counter<"route" | "status" | "code">;
  edgeRequestDuration: Histogram<"route">;
  /** Bytes read from clients' connections, headers included. */
  edgeReceivedBytes: Counter;
  rateLimited: Counter;
  authenticationFailures: Counter<"code">;
  runsCreated: Counter;
  runsCompleted: Counter;
  runsFailed: Counter<"reason">;
  runsCancelled: Counter;
  /** From a run's creation to its final status. */
  runDuration: Histogram<"status">;
  stepDuration: Histogram<"node_type" | "format" | "outcome">;
  callbackDeliveries: Counter<"outcome" | "attempt">;
  /** What the retention sweeper deleted: "runs", "files" (file rows) and "documents" (stored bytes). */
  retentionRemoved: Counter<"kind">;
}

/** Request and step durations: 5 ms to 2 minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Runs wait in the queue too: 50 ms to an hour. */
const RUN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    edgeRequests: new Counter({
      name: "docpipe_edge_requests_total",
      help: "Requests answered by the REST edge, by route pattern, status and problem code (none for a success)",
      labelNames: ["route", "status", "code"],
      registers,
    }),
    edgeRequestDuration: new Histogram({
      name: "docpipe_edge_request_duration_seconds",
      help: "Time from a request's arrival to its answer, by route pattern",
      labelNames: ["route"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    edgeReceivedBytes: new Counter({
      name: "docpipe_edge_received_bytes_total",
      help: "Bytes read from clients by the REST edge, headers included",
      registers,
    }),
    rateLimited: new Counter({ name: "docpipe_rate_limited_total", help: "Submissions refused because the key's plan limit was reached", registers }),
    authenticationFailures: new Counter({
      name: "docpipe_authentication_failures_total",
      help: "Submissions refused for their API key, by problem code",
      labelNames: ["code"],
      registers,
    }),
    runsCreated: new Counter({ name: "docpipe_runs_created_total", help: "Runs created (submissions accepted)", registers }),
    runsCompleted: new Counter({ name: "docpipe_runs_completed_total", help: "Runs that completed", registers }),
    runsFailed: new Counter({
      name: "docpipe_runs_failed_total",
      help: "Runs that failed, by the failure's code (the failing step's error code, or its node type)",
      labelNames: ["reason"],
      registers,
    }),
    runsCancelled: new Counter({ name: "docpipe_runs_cancelled_total", help: "Runs cancelled through RunService.CancelRun", registers }),
    runDuration: new Histogram({
      name: "docpipe_run_duration_seconds",
      help: "Time from a run's creation to its final status (queueing included), by that status",
      labelNames: ["status"],
      buckets: RUN_BUCKETS,
      registers,
    }),
    stepDuration: new Histogram({
      name: "docpipe_step_duration_seconds",
      help: "Time one step took in the worker, by node type, document format and outcome",
      labelNames: ["node_type", "format", "outcome"],
      buckets: DURATION_BUCKETS,
      registers,
    }),
    callbackDeliveries: new Counter({
      name: "docpipe_callback_deliveries_total",
      help: "Callback attempts, by outcome and attempt number (6+ for the sixth and later)",
      labelNames: ["outcome", "attempt"],
      registers,
    }),
    retentionRemoved: new Counter({
      name: "docpipe_retention_removed_total",
      help: "Runs, file rows and stored documents deleted because their pipe's retention_days had passed",
      labelNames: ["kind"],
      registers,
    }),
  };
}

interface QueueStats {
  queued: number;
  /** Age of the oldest queued run; 0 when none is queued. */
  oldestAgeSeconds: number;
}

interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface ProcessSources {
  /** Read when scraped; given by processes that have the database. */
  queue?: (() => Promise<QueueStats>) | undefined;
  pool?: (() => PoolStats | undefined) | undefined;
}

/**
 * Adds what a whole process reports: Node's default metrics (event-loop lag, memory, CPU, handles),
 * and, where the process has the database, its pool and the run queue, read when scraped.
 */
export function observeProcess(metrics: Metrics, sources: ProcessSources): void {
  const registers = [metrics.registry];
  collectDefaultMetrics({ register: metrics.registry });
  const { queue, pool } = sources;
  if (queue !== undefined) {
    // One query answers both gauges; a scrape reads it once.
    let pending: Promise<QueueStats> | undefined;
    const read = () => {
      pending ??= queue().finally(() => {
        pending = undefined;
      });
      return pending;
    };
    new Gauge({
      name: "docpipe_runs_queued",
      help: "Runs waiting for a worker now",
      registers,
      async collect() {
        this.set((await read()).queued);
      },
    });
    new Gauge({
      name: "docpipe_runs_oldest_queued_age_seconds",
      help: "How long the oldest queued run has waited (0 when none waits)",
      registers,
      async collect() {
        this.set((await read()).oldestAgeSeconds);
      },
    });
  }
  if (pool !== undefined) {
    const gauge = (name: string, help: string, value: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const stats = pool();
          if (stats !== undefined) this.set(value(stats));
        },
      });
    gauge("docpipe_db_pool_in_use", "Database connections checked out of the pool", (stats) => stats.total - stats.idle);
    gauge("docpipe_db_pool_idle", "Database connections open and idle in the pool", (stats) => stats.idle);
    gauge("docpipe_db_pool_waiting", "Queries waiting for a database connection", (stats) => stats.waiting);
  }
}

/** The attempt label: bounded, whatever a pipeline's retry count. */
export function attemptLabel(attempt: number): string {
  return attempt > 5 ? "6+" : String(attempt);
}
