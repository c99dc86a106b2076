import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DedupeNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { newId } from "../../src/platform/ids.ts";
import { executeDedupe } from "../../src/runs/nodes/dedupe/dedupe.ts";
import { workerBed } from "../support/worker-bed.ts";
import { createPipe, insertTenant, stepsOf } from "../worker/fixtures.ts";
import { nodeContext } from "./support.ts";

const bed = workerBed();
const DAY_MS = 86_400_000;
const invoice = { extract: { fields: { number: "2026-17" } }, file: { name: "invoice.pdf" } };
const byNumber = create(DedupeNodeSchema, { key: "[extract.fields.number, 'acme']", withinDays: 30 });

/** A dedupe step of a new run of `pipeId` at `now`. */
function dedupe(pipeId: string, data: object, now = new Date(), runId = newId(), node = byNumber, testMode = false) {
  return executeDedupe(node, data as never, nodeContext(), { db: bed.db, pipeId, runId, now, testMode });
}

describe("dedupe", () => {
  it("finds a key another run of the pipe gave within the days a duplicate, naming that run; a retry of the first run finds its own key new", async () => {
    const pipeId = await createPipe(bed.db, await insertTenant(bed.db), []);
    const first = newId();
    expect(await dedupe(pipeId, invoice, new Date(), first)).toEqual({ key: '["2026-17","acme"]', duplicate: false, firstRunId: "" });
    expect(await dedupe(pipeId, invoice)).toEqual({ key: '["2026-17","acme"]', duplicate: true, firstRunId: first });
    expect((await dedupe(pipeId, invoice, new Date(), first)).duplicate).toBe(false);
    expect((await dedupe(pipeId, { ...invoice, extract: { fields: { number: "2026-18" } } })).duplicate).toBe(false);
  });

  it("in test mode looks a key up and records nothing: trying a pipe never makes a later document a duplicate", async () => {
    const pipeId = await createPipe(bed.db, await insertTenant(bed.db), []);
    const tried = () => dedupe(pipeId, invoice, new Date(), newId(), byNumber, true);
    expect(await tried()).toEqual({ key: '["2026-17","acme"]', duplicate: false, firstRunId: "" });
    expect((await tried()).duplicate).toBe(false);
    const real = newId();
    expect((await dedupe(pipeId, invoice, new Date(), real)).duplicate).toBe(false);
    // A document a real run gave is a duplicate to a test run as to any other.
    expect(await tried()).toEqual({ key: '["2026-17","acme"]', duplicate: true, firstRunId: real });
  });

  it("forgets a key after the days, and keeps the keys of each pipe apart", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, []);
    const other = await createPipe(bed.db, tenant, []);
    const now = Date.now();
    await dedupe(pipeId, invoice, new Date(now - 31 * DAY_MS));
    expect((await dedupe(pipeId, invoice, new Date(now))).duplicate).toBe(false);
    expect((await dedupe(pipeId, invoice, new Date(now + DAY_MS))).duplicate).toBe(true);
    expect((await dedupe(other, invoice, new Date(now))).duplicate).toBe(false);
  });

  it("of runs giving one key at the same moment, one finds it new and every other names that run", async () => {
    const pipeId = await createPipe(bed.db, await insertTenant(bed.db), []);
    const runIds = Array.from({ length: 12 }, () => newId());
    const outputs = await Promise.all(runIds.map((runId) => dedupe(pipeId, invoice, new Date(), runId)));
    const fresh = outputs.flatMap((output, index) => (output.duplicate ? [] : [runIds[index]]));
    expect(fresh).toHaveLength(1);
    expect(outputs.filter((output) => output.duplicate).map((output) => output.firstRunId)).toEqual(Array(11).fill(fresh[0]));
  });

  it("never finds a key of nothing a duplicate", async () => {
    const pipeId = await createPipe(bed.db, await insertTenant(bed.db), []);
    const missing = create(DedupeNodeSchema, { key: "extract.fields.missing", withinDays: 30 });
    for (let i = 0; i < 2; i++) expect(await dedupe(pipeId, invoice, new Date(), newId(), missing)).toEqual({ key: "", duplicate: false, firstRunId: "" });
  });

  it("ends a duplicate's branch in a run, or goes on with duplicate true for a route to branch on", async () => {
    const tenant = await insertTenant(bed.db);
    const nodes = (continueOnDuplicate: boolean) => [
      { id: "seen", dedupe: { key: "file.name", withinDays: 1, continueOnDuplicate } },
      { id: "after", transform: { expression: "seen.duplicate" } },
    ];
    const dropping = await createPipe(bed.db, tenant, nodes(false));
    const marking = await createPipe(bed.db, tenant, nodes(true));
    bed.start();
    const ended = async (pipeId: string) => {
      const runId = await bed.submit(tenant, pipeId, "invoice.txt", "txt", Buffer.from("Invoice 2026-17"));
      expect((await bed.until([runId]))[0]!.status).toBe("completed");
      return (await stepsOf(bed.db, runId)).map((step) => [step.node_id, step.output]);
    };
    expect(await ended(dropping)).toContainEqual(["after", false]);
    expect((await ended(dropping)).map(([id]) => id)).toEqual(["trigger", "seen"]);
    await ended(marking);
    expect(await ended(marking)).toContainEqual(["seen", { key: "invoice.txt", duplicate: true, firstRunId: expect.any(String) }]);
  });
});
