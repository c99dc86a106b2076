import type { Config } from "../platform/config.ts";
import type { RunsQueuedNotifier } from "../data/db/run-notifications.ts";
import type { Db } from "../data/db/schema.ts";
import type { Metrics } from "../platform/observability/metrics.ts";
import type { PageTokens } from "./pagination.ts";

/** What every service implementation is built from; passed to its factory, never imported. */
export interface ServiceDeps {
  db: Db;
  config: Config;
  pageTokens: PageTokens;
  /** Told after each commit that queued a run, so idle workers wake. */
  runsQueued: Pick<RunsQueuedNotifier, "queued">;
  /** The current time; tests pass a fixed clock. */
  now: () => Date;
  /** Counts runs created and cancelled; absent in tests that do not look. */
  metrics?: Pick<Metrics, "runsCreated" | "runsCancelled"> | undefined;
}
