import { create } from "@bufbuild/protobuf";
import { PipelineSchema } from "../gen/docpipe/v1/pipe_pb.js";
import type { Row } from "./authenticate-key.ts";
import { edgeRate, unfinishedRuns, until } from "./ocr.ts";
import { createBenchDatabase } from "./support/database.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchPipe, benchTenant } from "./support/tenants.ts";

/** Runs whose transform is a `$pad` hog, queued before the measurement: more than it can end meanwhile. */
const HOG_BACKLOG = 400;
/** A built-in that builds for seconds in one JSONata step (7.3 s for 30,000,000 characters on the main thread). */
const HOG = '$length($pad("", 15000000, "x"))';

/**
 * The edge's 1 KiB throughput while the same process's worker evaluates `$pad` hogs in a loop (one
 * organization's pipe, a backlog of runs), as a ratio to its throughput without them (issue 46: >= 0.8).
 */
export async function benchEdgeWhileExpressionHogs(): Promise<Row[]> {
  const bench = await createBenchDatabase();
  const storage = await tempStorage();
  try {
    const tenant = await benchTenant(bench.clients, 20);
    const hogger = await benchTenant(bench.clients, 20);
    await benchPipe(bench.clients, tenant.organizationId, ["txt"], 20);
    const { pipe } = await bench.clients.pipes.createPipe({
      organizationId: hogger.organizationId,
      name: "hog pipe",
      pipeline: create(PipelineSchema, {
        nodes: [
          { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["txt"], maxSizeMb: 1 } } },
          { id: "hog", kind: { case: "transform", value: { expression: HOG } } },
        ],
      }),
    });
    await bench.clients.pipes.activatePipe({ organizationId: hogger.organizationId, pipeId: pipe!.id });
    const server = await spawnEdge(bench.url, storage.dir, [], { DOCPIPE_ROLES: "edge,services,worker" });
    try {
      const url = triggerUrl(server.url, tenant);
      const without = await edgeRate(url, tenant.keyValue);
      await until(async () => (await unfinishedRuns(bench.db)) === 0, 180_000);
      for (let hog = 0; hog < HOG_BACKLOG; hog++) {
        const body = new FormData();
        body.append("file", new Blob(["hog"], { type: "text/plain" }), `hog-${hog}.txt`);
        const response = await fetch(`${server.url}/pipes/${pipe!.id}/trigger`, { method: "POST", headers: { "x-api-key": hogger.keyValue }, body });
        if (response.status !== 202) throw new Error(`a hog was refused: ${response.status} ${await response.text()}`);
      }
      const during = await edgeRate(url, tenant.keyValue);
      const failed = await bench.db.selectFrom("runs").select("id").where("pipe_id", "=", pipe!.id).where("status", "=", "failed").execute();
      return [
        { name: "Edge 1 KiB throughput, worker on, no expression hogs", value: Math.round(without), unit: "req/s" },
        {
          name: `Edge 1 KiB throughput while the worker evaluates $pad hogs (${failed.length} failed at their limit meanwhile)`,
          value: Math.round(during),
          unit: "req/s",
        },
        { name: "Edge throughput while $pad hogs run / without", value: Math.round((during / without) * 1000) / 1000, unit: "ratio" },
      ];
    } finally {
      await server.stop();
    }
  } finally {
    await storage.remove();
    await bench.drop();
  }
}
