import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ReviewDecision } from "../../gen/docpipe/v1/pipe_pb.js";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/schema.ts";
import { decideReview } from "../../src/repositories/run-steps.ts";
import type { FileStore } from "../../src/storage/file-store.ts";
import { startWorkers, type Workers } from "../../src/worker/worker.ts";
import { testDatabase, testDatabaseUrl } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { inMemoryClients } from "../support/services.ts";
import {
  addFile,
  cancelLeftoverRuns,
  closeSharedTaskPool,
  createPipe,
  insertTenant,
  memoryLog,
  queueRuns,
  sharedTaskPool,
  stepsOf,
  tempStore,
  waitForRuns,
  WORKER_ENV,
} from "../worker/fixtures.ts";

let db: Kysely<Database>;
let store: FileStore;
let databaseUrl: string;
const running: Workers[] = [];

beforeAll(async () => {
  db = await testDatabase();
  databaseUrl = await testDatabaseUrl();
  const temp = await tempStore();
  store = temp.store;
  return temp.remove;
});
afterAll(closeSharedTaskPool);
afterEach(async () => {
  await Promise.all(running.splice(0).map((workers) => workers.stop()));
  await cancelLeftoverRuns(db);
});

describe("a review decision that finds no waiting step", () => {
  it("leaves the run in review: a decision of an already decided review (a concurrent ResolveReview that lost, a stale timeout sweep) does not queue a run waiting at its next review", async () => {
    const tenant = await insertTenant(db);
    const pipeId = await createPipe(db, tenant, [
      { id: "first", review: {} },
      { id: "second", review: {} },
    ]);
    const [runId] = await queueRuns(db, tenant, pipeId, await addFile(db, store, tenant, "a.txt", "txt", Buffer.from("a")));
    const workers = startWorkers({ db, databaseUrl, config: loadConfig(WORKER_ENV), store, log: memoryLog(), pool: sharedTaskPool() });
    running.push(workers);
    await waitForRuns(db, [runId!], ["review"], 60_000);
    // ResolveReview B reads the waiting step (position 1) ...
    const firstPosition = (await stepsOf(db, runId!)).find((step) => step.node_id === "first")!.position;
    // ... while ResolveReview A decides it, and the worker takes the run on to the second review.
    await inMemoryClients(testDeps(db)).runs.resolveReview({ organizationId: tenant.organizationId, runId: runId!, decision: ReviewDecision.APPROVE });
    for (;;) {
      const second = (await stepsOf(db, runId!)).find((step) => step.node_id === "second");
      const [run] = await waitForRuns(db, [runId!], ["review", "completed", "failed"], 60_000);
      if (second?.status === "waiting" && run!.status === "review") break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await workers.stop();
    // B's decision of the first review now finds that step decided: it must change nothing.
    const decided = await decideReview(db, runId!, firstPosition, { output: { decision: "approve", reviewer: "late", changes: [] } });
    expect(decided).toBe(false);
    const run = await db.selectFrom("runs").select(["status"]).where("id", "=", runId!).executeTakeFirstOrThrow();
    // The run still waits at "second" (its step is still waiting), so it must still be in review, where
    // ResolveReview and the console's review queue find it; decideReview moved it to 'queued'.
    expect((await stepsOf(db, runId!)).find((step) => step.node_id === "second")!.status).toBe("waiting");
    expect(run.status).toBe("review");
  });
});
