import { AsyncResource } from "node:async_hooks";
import { stepTiming } from "../../platform/observability/step-timing.ts";

/** How a WriteBatcher groups its writes. */
export interface WriteBatcherOptions {
  /** Batches written at once; further items wait and go together in the next batch. */
  maxInFlight: number;
  /** Items in one batch at most. */
  maxBatch: number;
  /**
   * With a batch in flight, a further one starts only once every batch in flight has run this long;
   * meanwhile the items wait and gather. Undefined: at once, while fewer than `maxInFlight` are in
   * flight.
   */
  overlapAfterMs?: number;
  /**
   * Whether a failed batch may have failed for one item's sake, so each is written again alone.
   * Not for a lost connection: the batch may have been committed, and writing it again would write
   * it twice.
   */
  mayBeOneItems: (error: unknown) => boolean;
}

interface Pending<I, O> {
  item: I;
  /**
   * The async context of the caller that added the item (its request's trace). An AsyncResource
   * rather than AsyncLocalStorage.snapshot(): a snapshot is a bound function, which Node builds with
   * two deprecation wrappers and a property definition per call.
   */
  context: AsyncResource;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
  /** When it was added, with step timing on (see StepTiming). */
  added: number | undefined;
}

/**
 * Writes items through `write` in batches: one statement and one commit for many callers. An item
 * is written at once while no batch is being written, or while fewer than `maxInFlight` are and
 * (with `overlapAfterMs`) each of them has run that long; otherwise it waits, with every item that
 * arrives meanwhile, and they are written together. So a lone caller waits for nothing, and under
 * load a batch grows with the load ("natural batching": the database's per-statement and
 * per-commit costs are paid once per batch, not per item).
 *
 * A batch of several items that failed for one item's sake (`mayBeOneItems`: a row a constraint
 * refuses) is written again item by item, so that item fails only its own caller. `write` returns one result per item, in order.
 *
 * Ours rather than DataLoader's: DataLoader batches the calls of one tick, and submissions whose
 * uploads end at different moments seldom share a tick; what groups them here is the write in flight.
 */
export class WriteBatcher<I, O> {
  readonly #write: (items: I[]) => Promise<O[]>;
  readonly #options: WriteBatcherOptions;
  #waiting: Pending<I, O>[] = [];
  #inFlight = 0;
  /** The batch started last, while it is in flight: performance.now() at its start. */
  #newest: { start: number } | undefined;
  #flushQueued = false;
  #overlapTimer: NodeJS.Timeout | undefined;

  constructor(write: (items: I[]) => Promise<O[]>, options: WriteBatcherOptions) {
    this.#write = write;
    this.#options = options;
  }

  /** Writes `item` with whatever else is waiting; resolves with its own result. */
  add(item: I): Promise<O> {
    const { promise, resolve, reject } = Promise.withResolvers<O>();
    this.#waiting.push({ item, context: new AsyncResource("docpipe.WriteBatcher"), resolve, reject, added: stepTiming?.now() });
    // Calls of the same tick go in one batch: the flush waits for the microtasks already queued.
    if (!this.#flushQueued && this.#inFlight < this.#options.maxInFlight) {
      this.#flushQueued = true;
      queueMicrotask(() => {
        this.#flushQueued = false;
        this.#flush();
      });
    }
    return promise;
  }

  #flush(): void {
    while (this.#waiting.length > 0 && this.#inFlight < this.#options.maxInFlight && this.#mayOverlap()) {
      const batch = this.#waiting.splice(0, this.#options.maxBatch);
      const started = { start: performance.now() };
      this.#newest = started;
      this.#inFlight++;
      void this.#writeBatch(batch).finally(() => {
        this.#inFlight--;
        if (this.#newest === started) this.#newest = undefined;
        this.#flush();
      });
    }
  }

  /**
   * Whether a batch may start beside those in flight (see overlapAfterMs); when not yet, the flush is
   * tried again once it may. Only the batch started last needs checking: it started only once every
   * batch then in flight had run overlapAfterMs, so those have run longer than it. When it has ended,
   * the batches still in flight are among those, and another may start.
   */
  #mayOverlap(): boolean {
    const { overlapAfterMs } = this.#options;
    if (this.#inFlight === 0 || overlapAfterMs === undefined || this.#newest === undefined) return true;
    const wait = this.#newest.start + overlapAfterMs - performance.now();
    if (wait <= 0) return true;
    this.#overlapTimer ??= setTimeout(() => {
      this.#overlapTimer = undefined;
      this.#flush();
    }, Math.ceil(wait));
    return false;
  }

  async #writeBatch(batch: Pending<I, O>[]): Promise<void> {
    if (stepTiming !== undefined) for (const { added } of batch) stepTiming.since("CreateRun: waiting for its statement", added!);
    const timed = stepTiming?.now();
    try {
      // In the context of the batch's first caller: not of whichever earlier caller's write ended and
      // started this one (a trace that had ended would gain every later statement's span under load).
      const results = await batch[0]!.context.runInAsyncScope(() => this.#write(batch.map(({ item }) => item)));
      stepTiming?.since("CreateRun: its statement", timed!);
      batch.forEach((pending, index) => pending.resolve(results[index]!));
    } catch (error) {
      if (batch.length === 1 || !this.#options.mayBeOneItems(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // One refused item fails the whole statement: the others are written again on their own, one
      // after another within the batch's place in flight, so a large batch cannot take the whole pool.
      for (const pending of batch) await this.#writeBatch([pending]);
    }
  }
}
