import type { Kysely } from "kysely";
import { SecretBox } from "../../src/runs/deliveries/secret-box.ts";
import { loadConfig } from "../../src/platform/config.ts";
import { RunsQueuedNotifier } from "../../src/data/db/run-notifications.ts";
import type { Database } from "../../src/data/db/schema.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { PageTokens } from "../../src/api/pagination.ts";

/** The key that seals signing secrets and callback headers in service tests, so none writes a key file. */
export const TEST_SEALING_KEY = Buffer.alloc(32, 7).toString("base64");

/** The box of TEST_SEALING_KEY: seals and opens what the test's services and workers seal. */
export const testSecretBox = () => new SecretBox(Buffer.from(TEST_SEALING_KEY, "base64"));

/** The operator's credential (INTERNAL_TOKEN) in service tests; see OPERATOR_HEADERS. */
export const TEST_OPERATOR_TOKEN = "test-operator-token";

/** Service dependencies for tests: default configuration (overridable by environment-style settings). */
export function testDeps(db: Kysely<Database>, env: Record<string, string> = {}, now: () => Date = () => new Date()): ServiceDeps {
  const config = loadConfig({ SIGNING_SECRETS_KEY: TEST_SEALING_KEY, INTERNAL_TOKEN: TEST_OPERATOR_TOKEN, ...env });
  return { db, config, pageTokens: new PageTokens("test-secret"), runsQueued: new RunsQueuedNotifier(db), now };
}
