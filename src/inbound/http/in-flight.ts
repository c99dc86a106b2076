/** Handlers still running, so that shutdown can wait until each has cleaned up after itself. */
export class InFlight {
  #count = 0;
  #idle: PromiseWithResolvers<void> | undefined;

  /** Runs `work`, counted until it settles. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.#count++;
    try {
      return await work();
    } finally {
      if (--this.#count === 0) {
        this.#idle?.resolve();
        this.#idle = undefined;
      }
    }
  }

  get count(): number {
    return this.#count;
  }

  /** Resolves once nothing is running. */
  idle(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    this.#idle ??= Promise.withResolvers<void>();
    return this.#idle.promise;
  }
}
