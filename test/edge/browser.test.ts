/**
 * A real browser (Debian's Chromium, driven by playwright-core) on a page from another origin
 * submits FormData with fetch. The X-Api-Key header makes it a non-simple request, so Chromium sends
 * a CORS preflight first: the edge's answer to it decides whether the POST is sent at all.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { CHROMIUM, launchChromium } from "../support/chromium.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLES } from "../formats/fixtures.ts";
import { createTenant, type EdgeHarness, startEdge } from "../support/edge.ts";

/** What the page's script reports back. */
type Outcome =
  | { sent: true; status: number; body: { runId: string; pipeId: string; status: string }; rateLimitRemaining: string | null }
  | { sent: false; error: string };

/**
 * The page: its script reads the edge's address, the pipe and the key from its query string and
 * submits a PDF as FormData, then publishes what happened on `window.outcome`.
 */
function submitPage(): string {
  const pdf = Buffer.from(SAMPLES.pdf.bytes).toString("base64");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>submit</title></head><body>
<script>
(async () => {
  const query = new URLSearchParams(location.search);
  const form = new FormData();
  const bytes = Uint8Array.from(atob(${JSON.stringify(pdf)}), (char) => char.charCodeAt(0));
  form.append("file", new Blob([bytes], { type: "application/pdf" }), "invoice.pdf");
  try {
    const response = await fetch(query.get("edge") + "/pipes/" + query.get("pipe") + "/trigger", {
      method: "POST",
      headers: { "X-Api-Key": query.get("key") },
      body: form,
    });
    window.outcome = { sent: true, status: response.status, body: await response.json(), rateLimitRemaining: response.headers.get("RateLimit-Remaining") };
  } catch (error) {
    window.outcome = { sent: false, error: String(error) };
  }
})();
</script>
</body></html>`;
}

/** A page server on 127.0.0.1 and a free port: each one is an origin of its own. */
async function servePage(html: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.skipIf(!existsSync(CHROMIUM))(`a browser on another origin submits FormData with fetch (${CHROMIUM})`, () => {
  let edge: EdgeHarness;
  let browser: Browser;
  let allowedPage: { origin: string; server: Server };
  let otherPage: { origin: string; server: Server };

  beforeAll(async () => {
    edge = await startEdge();
    allowedPage = await servePage(submitPage());
    otherPage = await servePage(submitPage());
    browser = await launchChromium();
    return edge.close;
  });

  afterAll(async () => {
    await browser?.close();
    for (const page of [allowedPage, otherPage]) page?.server.close();
  });

  async function submitFrom(pageOrigin: string, pipeId: string, keyValue: string): Promise<Outcome> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const query = new URLSearchParams({ edge: edge.url, pipe: pipeId, key: keyValue });
      await page.goto(`${pageOrigin}/?${query}`);
      // An expression, not a function: this project's types have no DOM.
      const outcome = await page.waitForFunction("window.outcome", undefined, { timeout: 10_000 });
      return (await outcome.jsonValue()) as Outcome;
    } finally {
      await context.close();
    }
  }

  async function runCount(organizationId: string): Promise<number> {
    const { runs } = await edge.clients.runs.listRuns({ organizationId });
    return runs.length;
  }

  it("from an allowed origin: 202, and the script reads the body and the exposed rate-limit headers", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: [allowedPage.origin] });
    const outcome = await submitFrom(allowedPage.origin, tenant.pipeId, tenant.keyValue);
    expect(outcome).toMatchObject({ sent: true, status: 202, body: { pipeId: tenant.pipeId, status: "Queued" } });
    if (!outcome.sent) return;
    expect(Number(outcome.rateLimitRemaining)).toBeGreaterThanOrEqual(0);
    const { run } = await edge.clients.runs.getRun({ organizationId: tenant.organizationId, runId: outcome.body.runId });
    expect(run!.pipeId).toBe(tenant.pipeId);
    expect(await runCount(tenant.organizationId)).toBe(1);
  }, 30_000);

  it("from an origin not in the pipe's list: fetch rejects with a TypeError and nothing is stored", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: [allowedPage.origin] });
    const outcome = await submitFrom(otherPage.origin, tenant.pipeId, tenant.keyValue);
    expect(outcome).toEqual({ sent: false, error: expect.stringMatching(/^TypeError/) });
    expect(await runCount(tenant.organizationId)).toBe(0);
  }, 30_000);

  it("from any origin when the pipe allows *", async () => {
    const tenant = await createTenant(edge.clients, { allowedOrigins: ["*"] });
    expect(await submitFrom(otherPage.origin, tenant.pipeId, tenant.keyValue)).toMatchObject({ sent: true, status: 202 });
  }, 30_000);
});
