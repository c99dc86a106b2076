import type { Kysely } from "kysely";
import { loadConfig } from "../../src/config.ts";
import { RunsQueuedNotifier } from "../../src/db/run-notifications.ts";
import type { Database } from "../../src/db/schema.ts";
import type { ServiceDeps } from "../../src/services/deps.ts";
import { PageTokens } from "../../src/services/pagination.ts";

/** Service dependencies for tests: default configuration (overridable by environment-style settings). */
export function testDeps(db: Kysely<Database>, env: Record<string, string> = {}, now: () => Date = () => new Date()): ServiceDeps {
  return { db, config: loadConfig(env), pageTokens: new PageTokens("test-secret"), runsQueued: new RunsQueuedNotifier(db), now };
}
