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
