import { describe, expect, it, onTestFinished } from "vitest";
import { exitOf, occupiedPort, waitForOutput } from "../support/main-process.ts";
import { get, launchOnOwnDatabase } from "./support.ts";

describe("METRICS_PORT: metrics and health for a process without the internal port", { timeout: 60_000 }, () => {
  it("a worker-only process serves /metrics (with the token), /healthz and /readyz, behind the Host allow-list", async () => {
    const main = await launchOnOwnDatabase({ DOCPIPE_ROLES: "worker", METRICS_PORT: "0", INTERNAL_TOKEN: "worker-token" }, onTestFinished);
    const [, port] = await waitForOutput(main, /"port":(\d+),"msg":"metrics listening"/);
    const url = `http://127.0.0.1:${port}`;
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
    expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: "ready" });
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer worker-token" } });
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(text).toMatch(/^docpipe_runs_completed_total 0$/m);
    expect(text).toMatch(/^docpipe_runs_queued 0$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect((await fetch(`${url}/other`)).status).toBe(404);
    expect((await get(url, "/metrics", { authorization: "Bearer worker-token", host: "attacker.example" })).status).toBe(421);
  });

  it("a METRICS_PORT in use stops the start with one line naming it", async () => {
    const { port, server } = await occupiedPort();
    try {
      const main = await launchOnOwnDatabase({ DOCPIPE_ROLES: "worker", METRICS_PORT: String(port) }, onTestFinished);
      expect(await exitOf(main.child)).toBe(1);
      expect(main.output.stderr.trim()).toMatch(new RegExp(`^docpipe: METRICS_PORT ${port}: listen EADDRINUSE`));
    } finally {
      server.close();
    }
  });
});
