import { Code, type ConnectError } from "@connectrpc/connect";
import type { Db } from "../data/db/schema.ts";
import { ReadThroughCache } from "../platform/cache/read-through-cache.ts";
import { countPendingRuns } from "../data/repositories/runs.ts";
import { serviceError } from "./errors.ts";

/** How long a counted organization's pending runs are reused, with this process's own additions counted on top. */
const COUNT_TTL_MS = 1000;
/** Index entries a count may read per COUNT_TTL_MS of its reuse: a count of more is reused longer, where the cap is far (see countReuseMs). */
const COUNT_ENTRIES_PER_TTL = 20_000;

/**
 * How long a count of `counted` runs is reused: `ttlMs` (COUNT_TTL_MS), stretched while reading it
 * again would read more than COUNT_ENTRIES_PER_TTL index entries and the cap is far: one `ttlMs`
 * more for each COUNT_ENTRIES_PER_TTL runs counted and for each tenth of the cap still free,
 * whichever is fewer (so under ten times `ttlMs`). Under the default cap (10,000) a count is never
 * stretched; a queue of 200,000 under a cap of 1,000,000 was read twice a second, 17 ms of the
 * database's time each, and set the edge's slowest submissions (bench/README.md, 2026-12-07).
 * Near the cap, where it matters, the count is as fresh as ever.
 */
export function countReuseMs(counted: number, limit: number, ttlMs: number): number {
  const stretch = Math.min(counted / COUNT_ENTRIES_PER_TTL, (10 * (limit - counted)) / limit);
  return ttlMs * Math.max(1, stretch);
}

/** What a refused source tells its client to wait: runs leave the queue as workers take them. */
const QUEUED_RUNS_RETRY_AFTER_SECONDS = 30;

/** The refusal of a run past the cap: ResourceExhausted `too_many_queued_runs`, the edge's 429 and SMTP's 452. */
function tooManyQueuedRuns(limit: number): ConnectError {
  return serviceError(
    Code.ResourceExhausted,
    "too_many_queued_runs",
    `this organization has ${limit} runs queued or running, its most (MAX_QUEUED_RUNS_PER_ORGANIZATION); retry in ${QUEUED_RUNS_RETRY_AFTER_SECONDS} seconds`,
    { retryAfterSeconds: String(QUEUED_RUNS_RETRY_AFTER_SECONDS), limit: String(limit) },
  );
}

/**
 * MAX_QUEUED_RUNS_PER_ORGANIZATION for the services that create runs (submissions, email, reruns).
 * An organization's count is read from the database and reused for up to COUNT_TTL_MS, with the runs
 * this process creates meanwhile added to it, so a submission costs no query of its own under load.
 * Submissions arriving together share one read, and a count still in use is read again once half
 * its time has passed while it still answers (ReadThroughCache): about twice a COUNT_TTL_MS under
 * steady submissions, and no submission waits for it. Before, at its expiry every submission in
 * flight read the count at once, each a scan of up to the cap's rows, and waited for it. Other
 * processes' runs are seen within COUNT_TTL_MS, so the cap can be passed by what they create in that
 * time; this process's runs committed while a count is read are seen at the next read. A long
 * queue far below the cap is counted less often (countReuseMs).
 */
export class QueuedRunsCap {
  readonly #db: Db;
  readonly #limit: number;
  /** `counted`: the count as read; `count`: with this process's runs since added. */
  readonly #counts: ReadThroughCache<{ counted: number; count: number }>;

  /** `countTtlMs`: how long a count is reused (COUNT_TTL_MS), before countReuseMs stretches it. */
  constructor(db: Db, limit: number, countTtlMs = COUNT_TTL_MS) {
    this.#db = db;
    this.#limit = limit;
    this.#counts = new ReadThroughCache({ max: 10_000, ttlMs: countTtlMs, ttlOf: ({ counted }) => countReuseMs(counted, limit, countTtlMs) });
  }

  /** Throws `too_many_queued_runs` when `adding` more runs would take the organization past the cap. */
  async check(organizationId: string, adding: number): Promise<void> {
    const entry = await this.#counts.get(organizationId, async () => {
      const counted = await countPendingRuns(this.#db, organizationId, this.#limit + 1);
      return { counted, count: counted };
    });
    if (entry!.count + adding > this.#limit) throw tooManyQueuedRuns(this.#limit);
  }

  /** Runs this process created, counted until the organization's next read. */
  added(organizationId: string, count: number): void {
    const entry = this.#counts.peek(organizationId);
    if (entry !== undefined) entry.count += count;
  }
}
