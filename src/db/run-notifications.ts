import { type Kysely, sql } from "kysely";

/** The channel idle workers LISTEN on (src/worker/wake.ts): a notification means runs may be queued. */
export const RUNS_CHANNEL = "docpipe_runs";

/** The channel a cancelled run is announced on, with its id as the payload (a trigger sends it, see migrations). */
export const RUN_CANCELLED_CHANNEL = "docpipe_run_cancelled";

/** Sends one notification on RUNS_CHANNEL, in a transaction of its own. */
export async function notifyRunsQueued(db: Kysely<any>): Promise<void> {
  await sql`select pg_notify(${RUNS_CHANNEL}, '')`.execute(db);
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
