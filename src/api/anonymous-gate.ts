/**
 * Where the RPCs anyone may call without a credential (SignIn, AcceptInvitation, the OIDC callback)
 * wait for the database, apart from everyone else: at most `concurrency` of them hold pool
 * connections at once (SIGN_IN_CONCURRENCY), the next `queue` wait here without one
 * (SIGN_IN_QUEUE), and any more are refused at once. A burst of 1,000 sign-ins for one account
 * queued on its counter row while holding the shared pool's connections, and every other caller got
 * "the database is unavailable"; now they hold `concurrency` connections whatever the burst.
 */
export class AnonymousGate {
  readonly #concurrency: number;
  readonly #queue: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(concurrency: number, queue: number) {
    this.#concurrency = concurrency;
    this.#queue = queue;
  }

  /** Runs `work` when a place is free; throws `refusal()` at once when the queue is full. */
  async run<T>(work: () => Promise<T>, refusal: () => Error): Promise<T> {
    if (this.#running < this.#concurrency) this.#running++;
    else if (this.#waiting.length < this.#queue) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else throw refusal();
    try {
      return await work();
    } finally {
      // The place passes to the next waiting call, or is freed.
      const next = this.#waiting.shift();
      if (next === undefined) this.#running--;
      else next();
    }
  }
}
