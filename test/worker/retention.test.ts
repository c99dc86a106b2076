/**
 * Retention: runs older than their pipe's retention_days are deleted, with what hangs off them and
 * the stored files no kept run refers to; everything else stays.
 */
import { existsSync } from "node:fs";
import type { KyselyPlugin, RootOperationNode } from "kysely";
import { describe, expect, it } from "vitest";
import type { RunStatus } from "../../src/data/db/schema.ts";
import { newId } from "../../src/platform/ids.ts";
import { createMetrics } from "../../src/platform/observability/metrics.ts";
import { sweepExpiredRuns } from "../../src/runs/engine/retention.ts";
import { addFile, createPipe, insertTenant, type Tenant } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const bed = workerBed();

const DAY_MS = 86_400_000;
/** The sweep's clock: two hours ahead, so documents stored by the test are past the orphan grace period. */
const sweepTime = () => new Date(Date.now() + 2 * 3_600_000);

async function pipeKeeping(tenant: Tenant, retentionDays: number): Promise<string> {
  const pipeId = await createPipe(bed.db, tenant, []);
  await bed.db.updateTable("pipes").set({ retention_days: retentionDays }).where("id", "=", pipeId).execute();
  return pipeId;
}

/** A run of the pipe on the file created `ageDays` ago, with a step and a delivered callback. */
async function addRun(
  tenant: Tenant,
  pipeId: string,
  fileId: string,
  ageDays: number,
  status: RunStatus = "completed",
  parentRunId: string | null = null,
): Promise<string> {
  const id = newId();
  const createTime = new Date(Date.now() - ageDays * DAY_MS);
  await bed.db
    .insertInto("runs")
    .values({
      id,
      organization_id: tenant.organizationId,
      workspace_id: tenant.workspaceId,
      pipe_id: pipeId,
      pipeline_version: 1,
      file_id: fileId,
      status,
      create_time: createTime,
      end_time: status === "review" ? null : createTime,
      parent_run_id: parentRunId,
    })
    .execute();
  await bed.db
    .insertInto("run_steps")
    .values({ run_id: id, position: 0, node_id: "trigger", node_type: "http_trigger", status: "completed", start_time: createTime, output: "{}" })
    .execute();
  await bed.db
    .insertInto("callback_deliveries")
    .values({
      id: newId(),
      run_id: id,
      organization_id: tenant.organizationId,
      node_id: "notify",
      url: "https://example.com/hook",
      method: "POST",
      headers: "{}",
      timeout_ms: 1000,
      body: "{}",
      status: "delivered",
      last_attempt: 1,
    })
    .execute();
  return id;
}

async function runsLeft(ids: string[]): Promise<string[]> {
  const rows = await bed.db.selectFrom("runs").select("id").where("id", "in", ids).execute();
  return ids.filter((id) => rows.some((row) => row.id === id));
}

async function fileRowExists(fileId: string): Promise<boolean> {
  return (await bed.db.selectFrom("files").select("id").where("id", "=", fileId).executeTakeFirst()) !== undefined;
}

async function documentOf(fileId: string): Promise<string> {
  const row = await bed.db.selectFrom("files").select(["organization_id", "sha256"]).where("id", "=", fileId).executeTakeFirstOrThrow();
  return bed.store.pathOf(row.organization_id, row.sha256);
}

/** Counts the DELETE statements on `runs` a Kysely instance sends. */
function countingRunDeletes(): { plugin: KyselyPlugin; count: () => number } {
  let deletes = 0;
  const plugin: KyselyPlugin = {
    transformQuery({ node }: { node: RootOperationNode }) {
      if (node.kind === "DeleteQueryNode" && JSON.stringify(node.from).includes('"name":"runs"')) deletes++;
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { plugin, count: () => deletes };
}

describe("retention", () => {
  it("deletes only ended runs older than their pipe's retention, with their steps, deliveries and the files no kept run names", async () => {
    const tenant = await insertTenant(bed.db);
    const keepsADay = await pipeKeeping(tenant, 1);
    const keepsAll = await pipeKeeping(tenant, 0);
    const oldFile = await addFile(bed.db, bed.store, tenant, "old.pdf", "pdf", Buffer.from("only the old run"));
    const sharedRow = await addFile(bed.db, bed.store, tenant, "shared.pdf", "pdf", Buffer.from("one row, an old and a recent run"));
    // Two uploads of the same bytes: two file rows, one stored document.
    const sameBytesOld = await addFile(bed.db, bed.store, tenant, "twice.pdf", "pdf", Buffer.from("uploaded twice"));
    const sameBytesKept = await addFile(bed.db, bed.store, tenant, "twice.pdf", "pdf", Buffer.from("uploaded twice"));
    const recentFile = await addFile(bed.db, bed.store, tenant, "recent.pdf", "pdf", Buffer.from("recent"));
    const keptFile = await addFile(bed.db, bed.store, tenant, "kept.pdf", "pdf", Buffer.from("pipe keeps all"));
    const paths = {
      old: await documentOf(oldFile),
      shared: await documentOf(sharedRow),
      twice: await documentOf(sameBytesOld),
      kept: await documentOf(keptFile),
    };

    const old = await addRun(tenant, keepsADay, oldFile, 2);
    const oldFailed = await addRun(tenant, keepsADay, oldFile, 3, "failed");
    const oldSharing = await addRun(tenant, keepsADay, sharedRow, 2);
    const recentSharing = await addRun(tenant, keepsADay, sharedRow, 0.5);
    const oldSameBytes = await addRun(tenant, keepsADay, sameBytesOld, 2);
    const keptSameBytes = await addRun(tenant, keepsAll, sameBytesKept, 30);
    const recent = await addRun(tenant, keepsADay, recentFile, 0.5);
    const inReview = await addRun(tenant, keepsADay, recentFile, 5, "review");
    const keptForever = await addRun(tenant, keepsAll, keptFile, 3000);
    const metrics = createMetrics();

    const removed = await sweepExpiredRuns(bed.db, bed.store, metrics, sweepTime());

    expect(removed).toEqual({ runs: 4, files: 2, documents: 1 });
    const all = [old, oldFailed, oldSharing, recentSharing, oldSameBytes, keptSameBytes, recent, inReview, keptForever];
    expect(await runsLeft(all)).toEqual([recentSharing, keptSameBytes, recent, inReview, keptForever]);
    const orphanSteps = await bed.db.selectFrom("run_steps").select("run_id").where("run_id", "in", [old, oldFailed, oldSharing, oldSameBytes]).execute();
    const orphanDeliveries = await bed.db.selectFrom("callback_deliveries").select("id").where("run_id", "in", [old, oldSharing]).execute();
    expect([orphanSteps, orphanDeliveries]).toEqual([[], []]);
    expect(await bed.db.selectFrom("run_steps").select("run_id").where("run_id", "=", recent).execute()).toHaveLength(1);
    expect([await fileRowExists(oldFile), await fileRowExists(sameBytesOld), await fileRowExists(sharedRow), await fileRowExists(sameBytesKept)]).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect([existsSync(paths.old), existsSync(paths.shared), existsSync(paths.twice), existsSync(paths.kept)]).toEqual([false, true, true, true]);
    const counted = (await metrics.registry.getSingleMetric("docpipe_retention_removed_total")!.get()).values;
    expect(Object.fromEntries(counted.map((value) => [value.labels.kind, value.value]))).toEqual({ runs: 4, files: 2, documents: 1 });

    expect(await sweepExpiredRuns(bed.db, bed.store, metrics, sweepTime())).toEqual({ runs: 0, files: 0, documents: 0 });
  });

  it("deletes in batches, one statement per batch, until no expired run is left", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await pipeKeeping(tenant, 1);
    const fileId = await addFile(bed.db, bed.store, tenant, "batch.pdf", "pdf", Buffer.from("batches"));
    const runs = [];
    for (let index = 0; index < 5; index++) runs.push(await addRun(tenant, pipeId, fileId, 2));
    const deletes = countingRunDeletes();

    const removed = await sweepExpiredRuns(bed.db.withPlugin(deletes.plugin), bed.store, undefined, sweepTime(), 2);

    expect(removed).toEqual({ runs: 5, files: 1, documents: 1 });
    // 2 + 2 + 1: the short batch says nothing is left.
    expect(deletes.count()).toBe(3);
    expect(await runsLeft(runs)).toEqual([]);
  });

  it("a split run goes with its child runs and their files, and never before a child's callback is delivered", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await pipeKeeping(tenant, 1);
    const bundle = await addFile(bed.db, bed.store, tenant, "bundle.pdf", "pdf", Buffer.from("the bundle"));
    const partFile = await addFile(bed.db, bed.store, tenant, "bundle-part-1.pdf", "pdf", Buffer.from("part one"));
    const partPath = await documentOf(partFile);
    const parent = await addRun(tenant, pipeId, bundle, 2);
    const child = await addRun(tenant, pipeId, partFile, 2, "completed", parent);
    const waiting = await addRun(tenant, pipeId, bundle, 2);
    const waitingChild = await addRun(tenant, pipeId, partFile, 2, "completed", waiting);
    await bed.db.updateTable("callback_deliveries").set({ status: "pending" }).where("run_id", "=", waitingChild).execute();

    const removed = await sweepExpiredRuns(bed.db, bed.store, undefined, sweepTime());

    expect(removed.runs).toBe(2);
    expect(await runsLeft([parent, child, waiting, waitingChild])).toEqual([waiting, waitingChild]);
    // The part's file row stays while the waiting child names it.
    expect(await fileRowExists(partFile)).toBe(true);
    await bed.db.updateTable("callback_deliveries").set({ status: "delivered" }).where("run_id", "=", waitingChild).execute();
    expect(await sweepExpiredRuns(bed.db, bed.store, undefined, sweepTime())).toEqual({ runs: 2, files: 2, documents: 2 });
    expect([await fileRowExists(partFile), existsSync(partPath)]).toEqual([false, false]);
  });

  it("a run with a callback still to deliver waits for its delivery", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await pipeKeeping(tenant, 1);
    const fileId = await addFile(bed.db, bed.store, tenant, "pending.pdf", "pdf", Buffer.from("pending"));
    const runId = await addRun(tenant, pipeId, fileId, 2);
    await bed.db.updateTable("callback_deliveries").set({ status: "pending" }).where("run_id", "=", runId).execute();

    expect(await sweepExpiredRuns(bed.db, bed.store, undefined, sweepTime())).toEqual({ runs: 0, files: 0, documents: 0 });
    expect(await runsLeft([runId])).toEqual([runId]);
  });
});
