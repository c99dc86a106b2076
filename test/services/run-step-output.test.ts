import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import type { Kysely } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import type { Database } from "../../src/db/schema.ts";
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

describe("RunService shows each step's output as it was executed", () => {
  it("a transform whose value is not an object (text, a number, a list) is shown by GetRun, not as an empty object", async () => {
    const tenant = await insertTenant(db);
    const pipeId = await createPipe(db, tenant, [
      { id: "text", transform: { expression: "'approved by rule 7'" } },
      { id: "count", transform: { expression: "4711" } },
      { id: "list", transform: { expression: "['a-item', 'b-item']" } },
    ]);
    const [runId] = await queueRuns(db, tenant, pipeId, await addFile(db, store, tenant, "a.txt", "txt", Buffer.from("a")));
    running.push(startWorkers({ db, databaseUrl, config: loadConfig(WORKER_ENV), store, log: memoryLog(), pool: sharedTaskPool() }));
    const [ended] = await waitForRuns(db, [runId!], undefined, 60_000);
    expect(ended!.status).toBe("completed");
    // The worker stored what each step produced...
    const stored = new Map((await stepsOf(db, runId!)).map((step) => [step.node_id, step.output]));
    expect([stored.get("text"), stored.get("count"), stored.get("list")]).toEqual(["approved by rule 7", 4711, ["a-item", "b-item"]]);
    // ...and GetRun shows it: RunStep.output is a Struct, for objects; any other value is output_value.
    const { run } = await inMemoryClients(testDeps(db)).runs.getRun({ organizationId: tenant.organizationId, runId: runId! });
    const shown = new Map(run!.steps.map((step) => [step.nodeId, step]));
    for (const [node, value] of [
      ["text", "approved by rule 7"],
      ["count", 4711],
      ["list", ["a-item", "b-item"]],
    ] as const) {
      expect(shown.get(node)!.output).toBeUndefined();
      expect(toJson(ValueSchema, shown.get(node)!.outputValue!)).toEqual(value);
    }
    // An object output is the Struct, as before.
    expect(shown.get("trigger")!.output).toBeDefined();
    expect(shown.get("trigger")!.outputValue).toBeUndefined();
  });
});
