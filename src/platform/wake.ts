/**
 * Lets idle slots sleep until work may be waiting. The generation counter closes the gap between
 * "claimed nothing" and "started waiting": a notification in between is not missed.
 *
 * A notification wakes one slot, not all of them: every slot woken for nothing costs a claim
 * statement. A slot that claimed something notifies in turn (there may be more), so a burst of work
 * wakes the idle slots one after another, each only once the one before found work; with no slot
 * idle, that wake-up is kept, so a slot whose claim came before the work it missed looks again.
 */
export class Wake {
  generation = 0;
  /** Idle slots, longest waiting first. */
  readonly #waiters = new Set<() => void>();
  /** When an idle slot last woke for its poll (performance.now(): a clock set back must not stop the polls). */
  #lastPoll = Number.NEGATIVE_INFINITY;

  /**
   * Resolves at once on a notification, or at once if one came since `seenGeneration`, or for a
   * poll after `ms`. Idle slots poll one at a time: a slot whose time comes less than `ms` after
   * another slot's poll waits on, so N idle slots look once per `ms`, not N times (one that finds
   * work wakes the next, as for a notification).
   */
  wait(ms: number, seenGeneration: number): Promise<void> {
    if (this.generation !== seenGeneration) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout;
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const poll = () => {
        const since = performance.now() - this.#lastPoll;
        if (since < ms) {
          timer = setTimeout(poll, ms - since);
          return;
        }
        this.#lastPoll = performance.now();
        done();
      };
      timer = setTimeout(poll, ms);
      this.#waiters.add(done);
    });
  }

  /**
   * Wakes one idle slot; with none idle, the notification is kept for the next slot to wait (it
   * sees the new generation and looks at once). One woken slot is enough: a busy slot that also
   * looked when it finished would find nothing, a claim statement spent for each notification that
   * came while it worked and an idle slot answered.
   */
  notify(): void {
    const [first] = this.#waiters;
    if (first === undefined) this.generation++;
    else first();
  }

  /** Wakes every idle slot: when stopping. */
  notifyAll(): void {
    this.generation++;
    for (const waiter of [...this.#waiters]) waiter();
  }
}
