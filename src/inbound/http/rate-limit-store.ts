/** A counter's state as @fastify/rate-limit reads it: requests in the window, and ms until it ends. */
interface WindowState {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, state: WindowState) => void;

/** Counters one store keeps at most (about 100 bytes each): 10 MB whatever a client invents. */
export const MAX_COUNTERS = 100_000;

/** The counter every key past MAX_COUNTERS shares until the window's sweep makes room. */
const OVERFLOW = "\0overflow";

/**
 * In-memory counters for @fastify/rate-limit (its `store` option) that hold for their whole window.
 * The plugin's own memory store is an LRU of 5,000 entries: with more keys or addresses active in a
 * minute, counters are evicted and their limits start again from zero. Here a counter is dropped
 * only once its window has ended (expired counters are swept once per window), so memory follows
 * the keys and addresses seen in the last two windows, about 100 bytes each, and at most MAX_COUNTERS
 * of them: past that, new keys share one counter (so inventing addresses cannot grow memory, and
 * those inventions are limited together) until the next sweep frees room. Written here because
 * the plugin's store interface is three methods and no maintained store offers this for memory.
 */
export class WindowCounterStore {
  readonly #counters = new Map<string, { count: number; endsAt: number }>();
  #nextSweep = 0;

  incr(key: string, callback: Callback, timeWindow: number): void {
    const now = Date.now();
    const counter = this.#counted(key, now, timeWindow);
    callback(null, { current: counter.count, ttl: counter.endsAt - now });
  }

  /** Counts `count` (one by default) under `key`, as incr does; returns when the count's window ends, which decr takes to give it back. */
  take(key: string, timeWindow: number, count = 1): number {
    return this.#counted(key, Date.now(), timeWindow, count).endsAt;
  }

  #counted(key: string, now: number, timeWindow: number, count = 1): { count: number; endsAt: number } {
    this.#sweep(now, timeWindow);
    const counted = this.#counters.has(key) || this.#counters.size < MAX_COUNTERS ? key : OVERFLOW;
    let counter = this.#counters.get(counted);
    if (counter === undefined || counter.endsAt <= now) {
      counter = { count: 0, endsAt: now + timeWindow };
      this.#counters.set(counted, counter);
    }
    counter.count += count;
    return counter;
  }

  read(key: string, callback: Callback): void {
    const now = Date.now();
    const counter = this.#counter(key);
    callback(null, counter === undefined || counter.endsAt <= now ? { current: 0, ttl: 0 } : { current: counter.count, ttl: counter.endsAt - now });
  }

  /** What `key` has counted in its current window. */
  current(key: string): number {
    const counter = this.#counter(key);
    return counter === undefined || counter.endsAt <= Date.now() ? 0 : counter.count;
  }

  /** The counter `key` counts in (the shared one once the store is full), if any. */
  #counter(key: string): { count: number; endsAt: number } | undefined {
    return this.#counters.get(key) ?? (this.#counters.size >= MAX_COUNTERS ? this.#counters.get(OVERFLOW) : undefined);
  }

  /**
   * Gives back a count that take() made in the window ending at `windowEnd` (what was counted did
   * not happen after all); once that window has ended, the next window's counts are not touched.
   */
  decr(key: string, windowEnd: number, count = 1): void {
    const counter = this.#counter(key);
    if (counter !== undefined && counter.endsAt === windowEnd && counter.endsAt > Date.now()) counter.count = Math.max(0, counter.count - count);
  }

  /** Each limiter (per key, per address) counts apart. */
  child(): WindowCounterStore {
    return new WindowCounterStore();
  }

  /** Counters being kept (ended ones not yet swept included). */
  get size(): number {
    return this.#counters.size;
  }

  #sweep(now: number, timeWindow: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + timeWindow;
    for (const [key, counter] of this.#counters) if (counter.endsAt <= now) this.#counters.delete(key);
  }
}
