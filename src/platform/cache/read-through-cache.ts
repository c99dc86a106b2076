import { LRUCache } from "lru-cache";

/**
 * lru-cache's `ttlResolution`: 0 reads the clock at each lookup. With its default (1 ms) it keeps a
 * time read for a millisecond and arms a timer to forget it, so the caches a submission looks up
 * armed timers at the rate of submissions (Timeouts per 1 KiB submission at 300 a second: 4.5-6.7
 * with it, 3.3 without, 3.0 for bare Fastify), where a clock read costs a twentieth of a microsecond.
 */
const CLOCK_PER_LOOKUP = { ttlResolution: 0 } as const;

export interface ReadThroughCacheOptions<V> {
  /** Entries kept at most, for found values and for misses each. */
  max: number;
  /** How long a found value is reused, counted from when its read began. */
  ttlMs: number;
  /** How long this found value is reused instead, when that depends on the value (default: `ttlMs` for each). */
  ttlOf?: (value: V) => number;
  /** How long a miss is remembered (0: misses are read again every time). */
  missTtlMs?: number;
  /** Which found values are kept (default: all); the others are returned, to every caller sharing the read, but read again next time. */
  keepIf?: (value: V) => boolean;
}

/**
 * A bounded cache in front of a read (a database lookup). Two guarantees make it safe for
 * credentials and routing:
 * - a value is reused for at most its time (`ttlMs`, or what `ttlOf` gives it) after its read
 *   *began*, so a change made elsewhere is seen within that time however slow the read was;
 * - `clear()` (called by every change made through this process) also voids reads still in flight:
 *   a read that began before a change never caches what it saw.
 * Misses have their own entries, so a flood of unknown lookups cannot evict the values in use.
 */
export class ReadThroughCache<V extends object> {
  readonly #hits: LRUCache<string, V>;
  readonly #misses: LRUCache<string, true> | undefined;
  readonly #ttlOf: (value: V) => number;
  readonly #missTtlMs: number;
  readonly #keepIf: (value: V) => boolean;
  /** Reads in flight: concurrent lookups of one key (a burst of the same unknown key) share one read. */
  readonly #pending = new Map<string, Promise<V | undefined>>();
  #generation = 0;

  constructor(options: ReadThroughCacheOptions<V>) {
    const { ttlMs, ttlOf = () => ttlMs } = options;
    this.#ttlOf = ttlOf;
    this.#keepIf = options.keepIf ?? (() => true);
    this.#missTtlMs = options.missTtlMs ?? 0;
    this.#hits = new LRUCache({ max: options.max, ttl: Math.max(ttlMs, 1), ...CLOCK_PER_LOOKUP });
    this.#misses = this.#missTtlMs > 0 ? new LRUCache({ max: options.max, ttl: this.#missTtlMs, ...CLOCK_PER_LOOKUP }) : undefined;
  }

  /** The value for `key`: cached, or read by `read` (undefined when there is none) and cached. */
  async get(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.#hits.get(key);
    if (hit !== undefined) {
      if (this.#hits.getRemainingTTL(key) < this.#ttlOf(hit) / 2) this.#refresh(key, read);
      return hit;
    }
    if (this.#misses?.has(key)) return undefined;
    const pending = this.#pending.get(key);
    if (pending !== undefined) return pending;
    const reading = this.#read(key, read);
    this.#pending.set(key, reading);
    try {
      return await reading;
    } finally {
      if (this.#pending.get(key) === reading) this.#pending.delete(key);
    }
  }

  /** The value cached for `key`, without reading it (nor refreshing it, nor making it recently used); undefined when none is. */
  peek(key: string): V | undefined {
    return this.#hits.peek(key);
  }

  /**
   * Reads `key` again while its value, past half its time, is still answered from the cache: a key
   * in steady use is read again before it expires, so no lookup waits on the read (a submission's
   * key check and trigger waited on a database round trip once a second, behind whatever the pool
   * and the disk were doing). The value's own time still bounds its reuse: a read slower than what
   * is left of it leaves later lookups to wait for that read, as at expiry. A failed read is
   * forgotten; the lookup at expiry reads again and gets the error.
   */
  #refresh(key: string, read: () => Promise<V | undefined>): void {
    if (this.#pending.has(key)) return;
    const reading = this.#read(key, read);
    this.#pending.set(key, reading);
    reading
      .catch(() => {})
      .finally(() => {
        if (this.#pending.get(key) === reading) this.#pending.delete(key);
      });
  }

  async #read(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.#generation;
    const readStart = performance.now();
    const value = await read();
    if (generation !== this.#generation) return value;
    const ttl = (value === undefined ? this.#missTtlMs : this.#ttlOf(value)) - (performance.now() - readStart);
    // What a refresh found replaces the value it refreshed: a value gone or no longer kept is not answered again.
    if (value === undefined || !this.#keepIf(value)) this.#hits.delete(key);
    else if (ttl >= 1) this.#hits.set(key, value, { ttl });
    if (value === undefined && ttl >= 1) this.#misses?.set(key, true, { ttl });
    return value;
  }

  /** Forgets every entry and voids the reads in flight. */
  clear(): void {
    this.#generation++;
    this.#pending.clear();
    this.#hits.clear();
    this.#misses?.clear();
  }
}
