import { writeFileSync } from "node:fs";

/**
 * The wall time of each step of a submission (the checks, the staged write, its fsync, the commit's
 * rename and folder fsync, the run insert, the reply), for the bench's profiling pass
 * (`BENCH="submission steps"`, bench/submission-steps.ts). On only when the environment variable
 * DOCPIPE_STEP_TIMING names a file: the process then writes every step's durations there, as JSON,
 * when it exits (SIGUSR2 forgets what was recorded so far: the warm-up). Off, `stepTiming` is undefined, and a timed step costs its call site one check
 * (`stepTiming?.since(...)` evaluates nothing else), so the measured runs never pay for it.
 */
export class StepTiming {
  readonly #durations = new Map<string, number[]>();
  readonly #started = new WeakMap<object, number>();

  now(): number {
    return performance.now();
  }

  /** Records the time from `start` (a `now()`) to now as one occurrence of `step`; returns now. */
  since(step: string, start: number): number {
    const now = performance.now();
    const durations = this.#durations.get(step);
    if (durations === undefined) this.#durations.set(step, [now - start]);
    else durations.push(now - start);
    return now;
  }

  /** Notes now as the start of `owner`'s whole (a request), for `end`. */
  begin(owner: object): void {
    this.#started.set(owner, performance.now());
  }

  /** Records the time since `begin(owner)` as one occurrence of `step`. */
  end(step: string, owner: object): void {
    const start = this.#started.get(owner);
    if (start !== undefined) this.since(step, start);
  }

  /** Forgets every duration recorded so far. */
  clear(): void {
    this.#durations.clear();
  }

  /** Every step's durations in milliseconds, in the order they were met. */
  durations(): Record<string, number[]> {
    return Object.fromEntries(this.#durations);
  }
}

function fromEnvironment(): StepTiming | undefined {
  const file = process.env.DOCPIPE_STEP_TIMING;
  if (file === undefined || file === "") return undefined;
  const timing = new StepTiming();
  process.once("exit", () => writeFileSync(file, JSON.stringify(timing.durations())));
  process.on("SIGUSR2", () => timing.clear());
  return timing;
}

/** The process's step timing, or undefined (the default: no timing at all). */
export const stepTiming = fromEnvironment();
