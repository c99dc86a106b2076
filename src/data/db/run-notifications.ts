import { CompiledQuery, type Kysely } from "kysely";
import pg from "pg";

/** The channel idle workers LISTEN on (listenForRuns): a notification means runs may be queued. */
const RUNS_CHANNEL = "docpipe_runs";

/** The channel a cancelled run is announced on, with its id as the payload (a trigger sends it, see migrations). */
const RUN_CANCELLED_CHANNEL = "docpipe_run_cancelled";

/** The statement notifyRunsQueued sends, compiled once: RunsQueuedNotifier sends it up to fifty times a second under load. */
const NOTIFY_RUNS_QUEUED = CompiledQuery.raw(`select pg_notify('${RUNS_CHANNEL}', '')`);

/** Sends one notification on RUNS_CHANNEL, in a transaction of its own. */
export async function notifyRunsQueued(db: Kysely<any>): Promise<void> {
  await db.executeQuery(NOTIFY_RUNS_QUEUED);
}

/** At most one notification per this many ms while runs keep coming. */
const COALESCE_MS = 20;

/**
 * Tells idle workers, in this process and every other, that runs were queued. The notification is
 * sent after the run's commit, never inside it: PostgreSQL serializes the commits of notifying
 * transactions, WAL flush included, behind one lock, which made every submission wait for the one
 * before it. The first run after a quiet spell is notified at once; runs queued within COALESCE_MS of
 * a notification share one more, sent when that window ends, so every queued run is followed by a
 * notification within COALESCE_MS. A notification that fails is dropped: workers also poll
 * (WORKER_POLL_MS), and the database being down is reported by the request that hit it.
 */
export class RunsQueuedNotifier {
  readonly #db: Kysely<any>;
  #window: NodeJS.Timeout | undefined;
  #pending = false;
  #sending: Promise<void> = Promise.resolve();

  constructor(db: Kysely<any>) {
    this.#db = db;
  }

  /** Call once a transaction that queued runs has committed. */
  queued(): void {
    if (this.#window !== undefined) {
      this.#pending = true;
      return;
    }
    this.#send();
    this.#window = setTimeout(() => this.#windowEnded(), COALESCE_MS).unref();
  }

  /** Sends what is still owed, at once, and waits for it; call before the database closes. */
  async close(): Promise<void> {
    clearTimeout(this.#window);
    this.#window = undefined;
    if (this.#pending) {
      this.#pending = false;
      this.#send();
    }
    await this.#sending;
  }

  #windowEnded(): void {
    this.#window = undefined;
    if (!this.#pending) return;
    this.#pending = false;
    this.queued();
  }

  #send(): void {
    this.#sending = notifyRunsQueued(this.#db).catch(() => {});
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
export function listenForRuns(databaseUrl: string, listeners: RunListeners, log: { warn(object: object, message: string): void }): { close(): Promise<void> } {
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
