import type { Migration } from "kysely/migration";
import * as initial from "./2026-11-22T0000-initial.ts";
import * as signingSecrets from "./2026-11-22T0100-signing-secrets.ts";
import * as notifyAfterCommit from "./2026-11-22T0200-notify-after-commit.ts";

/** Every migration, by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  "2026-11-22T0000-initial": initial,
  "2026-11-22T0100-signing-secrets": signingSecrets,
  "2026-11-22T0200-notify-after-commit": notifyAfterCommit,
};
