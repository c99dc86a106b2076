import type { Kysely } from "kysely";
import type { Config } from "../config.ts";
import type { RunsQueuedNotifier } from "../db/run-notifications.ts";
import type { Database } from "../db/schema.ts";
import type { PageTokens } from "./pagination.ts";

/** What every service implementation is built from; passed to its factory, never imported. */
export interface ServiceDeps {
  db: Kysely<Database>;
  config: Config;
  pageTokens: PageTokens;
  /** Told after each commit that queued a run, so idle workers wake. */
  runsQueued: Pick<RunsQueuedNotifier, "queued">;
  /** The current time; tests pass a fixed clock. */
  now: () => Date;
}
