import { createServer } from "node:net";
import { createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { remoteTransport } from "../../src/api/clients.ts";
import { cleanups, createPipe, eventually, get, type Service, startService, submit } from "./support.ts";

const TOKEN = "metrics-test-token";

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The value of one sample line (`name{labels} value`), or undefined when the registry has no such line. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics on the internal port", { timeout: 90_000 }, () => {
  let service: Service;
  const scrape = async () => {
    const response = await get(service.internalUrl, "/metrics", { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(200);
    return response.body;
  };

  beforeAll(async () => {
    const teardown = cleanups();
    service = await startService({ INTERNAL_TOKEN: TOKEN }, teardown.add);
    return teardown.run;
  });

  it("counts a known sequence exactly: 2 accepted, 1 refused for its format, 2 runs completed, 1 callback attempt failed", async () => {
    const completes = await createPipe(service.clients);
    const fails = await createPipe(service.clients, [`http://127.0.0.1:${await closedPort()}/hook`]);
    // The callback is signed, then finds nobody listening: its first attempt fails; the run completes all the same.
    await createClient(SigningSecretService, remoteTransport(service.internalUrl, TOKEN)).rotateSigningSecret({ organizationId: fails.organizationId });

    expect((await submit(service.edgeUrl, completes)).status).toBe(202);
    expect((await submit(service.edgeUrl, fails)).status).toBe(202);
    const refused = await submit(service.edgeUrl, completes, "%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n1 0 obj\n<<>>\nendobj\n", "document.pdf");
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe("unsupported_format");
    const unauthenticated = await fetch(`${service.edgeUrl}/pipes/${completes.pipeId}/trigger`, { method: "POST" });
    expect(unauthenticated.status).toBe(401);

    const text = await eventually(async () => {
      const body = await scrape();
      const attempted = sample(body, 'docpipe_callback_deliveries_total{outcome="network_error",attempt="1"}') === 1;
      return sample(body, "docpipe_runs_completed_total") === 2 && attempted ? body : undefined;
    }, "both runs finished and the callback attempted");

    const trigger = 'route="/pipes/:pipeId/trigger"';
    expect(sample(text, `docpipe_edge_requests_total{${trigger},status="202",code="none"}`)).toBe(2);
    expect(sample(text, `docpipe_edge_requests_total{${trigger},status="400",code="unsupported_format"}`)).toBe(1);
    expect(sample(text, `docpipe_edge_requests_total{${trigger},status="401",code="api_key_missing"}`)).toBe(1);
    expect(sample(text, `docpipe_edge_request_duration_seconds_count{${trigger}}`)).toBe(4);
    expect(sample(text, 'docpipe_authentication_failures_total{code="api_key_missing"}')).toBe(1);
    expect(sample(text, "docpipe_rate_limited_total")).toBe(0);
    expect(sample(text, "docpipe_edge_received_bytes_total")).toBeGreaterThan(0);
    expect(sample(text, "docpipe_runs_created_total")).toBe(2);
    expect(sample(text, "docpipe_runs_completed_total")).toBe(2);
    expect(text.match(/^docpipe_runs_failed_total\{/gm)).toBeNull();
    expect(sample(text, "docpipe_runs_cancelled_total")).toBe(0);
    expect(sample(text, 'docpipe_run_duration_seconds_count{status="completed"}')).toBe(2);
    expect(sample(text, 'docpipe_step_duration_seconds_count{node_type="parse",format="txt",outcome="completed"}')).toBe(2);
    expect(sample(text, 'docpipe_step_duration_seconds_count{node_type="callback",format="txt",outcome="completed"}')).toBe(1);
    expect(sample(text, 'docpipe_callback_deliveries_total{outcome="network_error",attempt="1"}')).toBe(1);
    expect(sample(text, "docpipe_runs_queued")).toBe(0);
    expect(sample(text, "docpipe_runs_oldest_queued_age_seconds")).toBe(0);
    // The pool's counters move with the workers' polling; they are there and sane.
    for (const gauge of ["docpipe_db_pool_in_use", "docpipe_db_pool_idle", "docpipe_db_pool_waiting"]) expect(sample(text, gauge)).toBeGreaterThanOrEqual(0);
    expect(sample(text, "docpipe_db_pool_in_use")! + sample(text, "docpipe_db_pool_idle")!).toBeGreaterThan(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    // No id of a key, pipe, run or organization is ever a label.
    for (const id of [completes.pipeId, fails.pipeId, completes.organizationId, fails.organizationId]) expect(text).not.toContain(id);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  it("needs INTERNAL_TOKEN when one is set, and answers only its own host names", async () => {
    const missing = await get(service.internalUrl, "/metrics");
    expect(missing.status).toBe(401);
    expect(missing.body).not.toContain("docpipe_");
    expect((await get(service.internalUrl, "/metrics", { authorization: "Bearer wrong" })).status).toBe(401);
    const rebound = await get(service.internalUrl, "/metrics", { authorization: `Bearer ${TOKEN}`, host: "attacker.example" });
    expect(rebound.status).toBe(421);
    const scraped = await get(service.internalUrl, "/metrics?x=1", { authorization: `Bearer ${TOKEN}` });
    expect(scraped.status).toBe(200);
    expect(scraped.type).toBe("text/plain; version=0.0.4; charset=utf-8");
  });
});
