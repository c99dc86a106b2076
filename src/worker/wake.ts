import pg from "pg";
import { RUN_CANCELLED_CHANNEL, RUNS_CHANNEL } from "../db/run-notifications.ts";
import type { WorkerLog } from "./log.ts";

/**
 * Lets idle worker slots sleep until a run may be waiting. The generation counter closes the gap
 * between "claimed nothing" and "started waiting": a notification in between is not missed.
 */
export class Wake {
  generation = 0;
  readonly #waiters = new Set<() => void>();

  /** Resolves after `ms`, or at once on a notification, or at once if one came since `seenGeneration`. */
  wait(ms: number, seenGeneration: number): Promise<void> {
    if (this.generation !== seenGeneration) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(done);
    });
  }

  notify(): void {
    this.generation++;
    for (const waiter of [...this.#waiters]) waiter();
  }
}

const RECONNECT_MS = 1000;

export interface RunListeners {
  /** Runs may be queued. */
  queued(): void;
  /** The run was cancelled. */
  cancelled(runId: string): void;
}

/**
 * LISTENs on a dedicated connection (outside the pool: LISTEN holds it) and calls `queued` for each
 * queued-runs notification, and once after every (re)connect for runs queued while it was away;
 * `cancelled` for each cancelled run. A lost connection is retried every second; meanwhile polling
 * keeps the workers going, and lease renewals find cancelled runs.
 */
export function listenForRuns(databaseUrl: string, listeners: RunListeners, log: WorkerLog): { close(): Promise<void> } {
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on("error", (error) => log.warn({ err: error }, "run notifications: connection error"));
    try {
      await next.connect();
      await next.query(`listen ${RUNS_CHANNEL}; listen ${RUN_CANCELLED_CHANNEL}`);
    } catch (error) {
      log.warn({ err: error }, "run notifications: cannot listen; polling until it can");
      await next.end().catch(() => {});
      if (!closed) retry = setTimeout(connect, RECONNECT_MS);
      return;
    }
    if (closed) return void (await next.end());
    client = next;
    next.on("notification", (notification) => {
      if (notification.channel === RUN_CANCELLED_CHANNEL) listeners.cancelled(notification.payload ?? "");
      else listeners.queued();
    });
    next.on("end", () => {
      client = undefined;
      if (!closed) retry = setTimeout(connect, RECONNECT_MS);
    });
    listeners.queued();
  };
  void connect();

  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
