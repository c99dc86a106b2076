import type { Migration } from "kysely/migration";
import * as initial from "./2026-11-22T0000-initial.ts";
import * as signingSecrets from "./2026-11-22T0100-signing-secrets.ts";
import * as notifyAfterCommit from "./2026-11-22T0200-notify-after-commit.ts";
import * as runFinished from "./2026-11-23T0100-run-finished.ts";
import * as runTraceContext from "./2026-11-23T0500-run-trace-context.ts";
import * as fairClaimsAndDeliveries from "./2026-11-24T0100-fair-claims-and-deliveries.ts";
import * as runEmail from "./2026-11-24T0300-run-email.ts";
import * as review from "./2026-11-24T0200-review.ts";
import * as testMode from "./2026-11-24T0210-test-mode.ts";
import * as rerun from "./2026-11-24T0220-rerun.ts";
import * as people from "./2026-11-24T0400-people.ts";
import * as claimRunFunction from "./2026-11-24T0500-claim-run-function.ts";
import * as retention from "./2026-11-24T0510-retention.ts";
import * as splitRuns from "./2026-11-24T0600-split-runs.ts";
import * as runsPipeKeys from "./2026-11-25T0100-runs-pipe-keys.ts";
import * as emailMessageRuns from "./2026-11-27T0100-email-message-runs.ts";
import * as copiedSteps from "./2026-12-05T0100-copied-steps.ts";
import * as dedupeKeys from "./2026-12-06T0100-dedupe-keys.ts";

/** Every migration, by name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  "2026-11-22T0000-initial": initial,
  "2026-11-22T0100-signing-secrets": signingSecrets,
  "2026-11-22T0200-notify-after-commit": notifyAfterCommit,
  "2026-11-23T0100-run-finished": runFinished,
  "2026-11-23T0500-run-trace-context": runTraceContext,
  "2026-11-24T0100-fair-claims-and-deliveries": fairClaimsAndDeliveries,
  "2026-11-24T0300-run-email": runEmail,
  "2026-11-24T0200-review": review,
  "2026-11-24T0210-test-mode": testMode,
  "2026-11-24T0220-rerun": rerun,
  "2026-11-24T0400-people": people,
  "2026-11-24T0500-claim-run-function": claimRunFunction,
  "2026-11-24T0510-retention": retention,
  "2026-11-24T0600-split-runs": splitRuns,
  "2026-11-25T0100-runs-pipe-keys": runsPipeKeys,
  "2026-11-27T0100-email-message-runs": emailMessageRuns,
  "2026-12-05T0100-copied-steps": copiedSteps,
  "2026-12-06T0100-dedupe-keys": dedupeKeys,
};
