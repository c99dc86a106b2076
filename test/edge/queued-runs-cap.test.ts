import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { SAMPLES } from "../formats/fixtures.ts";
import { createTenant, type EdgeHarness, startEdge, type Tenant } from "../support/edge.ts";
import { connectErrorOf } from "../support/errors.ts";

let edge: EdgeHarness;
beforeAll(async () => {
  edge = await startEdge({ MAX_QUEUED_RUNS_PER_ORGANIZATION: "2" });
  return edge.close;
});

async function submit(tenant: Tenant) {
  const body = new FormData();
  body.append("file", new Blob([SAMPLES.pdf.bytes], { type: SAMPLES.pdf.contentType }), SAMPLES.pdf.fileName);
  const response = await fetch(`${edge.url}/pipes/${tenant.pipeId}/trigger`, { method: "POST", headers: { "x-api-key": tenant.keyValue }, body });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe("MAX_QUEUED_RUNS_PER_ORGANIZATION", () => {
  it("answers a submission past the organization's queued runs with 429 too_many_queued_runs and Retry-After; a rerun gets ResourceExhausted; another organization is served", async () => {
    const tenant = await createTenant(edge.clients);
    const first = await submit(tenant);
    expect(first.status).toBe(202);
    expect((await submit(tenant)).status).toBe(202);

    const refused = await submit(tenant);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.body).toMatchObject({
      type: "https://docpipe.dev/problems/too_many_queued_runs",
      title: "Too many queued runs",
      status: 429,
      code: "too_many_queued_runs",
      limit: 2,
    });

    const rerun = await connectErrorOf(edge.clients.runs.rerunRun({ organizationId: tenant.organizationId, runId: first.body.runId as string }));
    expect(rerun.code).toBe(Code.ResourceExhausted);
    expect(errorInfoOf(rerun)?.reason).toBe("too_many_queued_runs");
    expect(errorInfoOf(rerun)?.metadata).toMatchObject({ retryAfterSeconds: "30", limit: "2" });

    const runs = await edge.deps.db.selectFrom("runs").select("id").where("organization_id", "=", tenant.organizationId).execute();
    expect(runs).toHaveLength(2);
    expect((await submit(await createTenant(edge.clients))).status).toBe(202);
  });
});
