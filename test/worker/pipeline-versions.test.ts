import { describe, expect, it } from "vitest";
import { newId } from "../../src/platform/ids.ts";
import { loadPipelineVersion } from "../../src/runs/engine/pipeline-versions.ts";
import { createPipe, insertTenant } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const bed = workerBed();

describe("the pipeline versions runs execute", () => {
  it("decodes a version once, and reads its pipe's test mode on every load", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const first = await loadPipelineVersion(bed.db, pipeId, 1);
    if (!("pipeline" in first)) throw new Error(`expected a pipeline, got ${JSON.stringify(first)}`);
    expect(first.pipeline.nodes.map((node) => node.id)).toEqual(["trigger", "parse"]);
    expect(first.graph.successors).toEqual([[1], []]);
    expect(first.testMode).toBe(false);

    await bed.db.updateTable("pipes").set({ test_mode: true }).where("id", "=", pipeId).execute();
    const second = await loadPipelineVersion(bed.db, pipeId, 1);
    if (!("pipeline" in second)) throw new Error(`expected a pipeline, got ${JSON.stringify(second)}`);
    expect(second.pipeline).toBe(first.pipeline);
    expect(second.testMode).toBe(true);
  });

  it("tells a version that does not exist, and one that cannot be read, from one that can", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    expect(await loadPipelineVersion(bed.db, pipeId, 2)).toEqual({ missing: true });
    expect(await loadPipelineVersion(bed.db, newId(), 1)).toEqual({ missing: true });
    await bed.db
      .insertInto("pipeline_versions")
      .values({ pipe_id: pipeId, version: 2, pipeline: JSON.stringify({ nodes: "not a list" }) })
      .execute();
    expect(await loadPipelineVersion(bed.db, pipeId, 2)).toEqual({ unreadable: expect.stringMatching(/nodes/) });
  });
});
