/**
 * A run's callback deliveries in real Chromium against a running docpipe: the attempts a receiver
 * refused are listed, and Redeliver makes one more, which the page shows delivered. A transform's
 * output that is not an object is shown too.
 */
import { existsSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { CallbackDeliveryStatus } from "../../gen/docpipe/v1/run_pb.js";
import { startReceiver } from "../callbacks/receiver.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer, submit } from "./harness.ts";
import { sleep } from "../support/wait.ts";

describe.skipIf(!existsSync(CHROMIUM))("a run's callbacks", () => {
  const receiver = startReceiver();
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let runId: string;

  beforeAll(async () => {
    const [started, browser, hook] = await Promise.all([
      startConsoleServer({ CALLBACK_ALLOW_PRIVATE_NETWORKS: "true", CALLBACK_BACKOFF_MS: "50", WORKER_POLL_MS: "100" }),
      launchChromium(),
      receiver,
    ]);
    server = started;
    hook.respond = (_delivery, response) => response.writeHead(503).end();
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Hooks Inc", plan: "advanced" });
    organizationId = organization!.id;
    await server.clients.signingSecrets.rotateSigningSecret({ organizationId });
    const keyValue = (await server.clients.keys.createKey({ organizationId, name: "uploader" })).keyValue;
    const { pipe } = await server.clients.pipes.createPipe({
      organizationId,
      workspaceId: "",
      name: "Notified",
      pipeline: create(PipelineSchema, {
        nodes: [
          { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["txt"], maxSizeMb: 1 } } },
          { id: "summary", kind: { case: "transform", value: { expression: "'received ' & file.name" } } },
          { id: "notify", kind: { case: "callback", value: { url: hook.url, retryCount: 1 } } },
        ],
      }),
    });
    await server.clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
    const accepted = await submit(server.edgeUrl, pipe!.id, keyValue, {
      bytes: new TextEncoder().encode("hello"),
      fileName: "note.txt",
      contentType: "text/plain",
    });
    expect(accepted.status).toBe(202);
    runId = ((await accepted.json()) as { runId: string }).runId;
    const deadline = Date.now() + 20_000;
    while ((await server.clients.runs.getRun({ organizationId, runId })).run!.callbackDeliveries[0]?.status !== CallbackDeliveryStatus.FAILED) {
      if (Date.now() > deadline) throw new Error("the callback's delivery did not fail in time");
      await sleep(100);
    }
    page = await operatorPage(browser, server, { width: 1280, height: 900 });
    page.setDefaultTimeout(15_000);
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  it("a completed run shows its failed callback's attempts; Redeliver makes a new one, shown delivered", { timeout: 90_000 }, async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/runs/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Run of note.txt" }).waitFor();
    // A step whose output is not an object (a transform's text) shows it.
    await page.getByRole("listitem").filter({ hasText: "summary" }).getByText('"received note.txt"').waitFor();
    const callback = page.getByRole("listitem").filter({ has: page.getByRole("button", { name: "Redeliver" }) });
    await callback.getByText("Failed", { exact: true }).waitFor({ timeout: 10_000 });
    const attempts = callback.getByRole("region", { name: "Attempts of notify" });
    await expect(attempts.getByRole("row").count()).resolves.toBe(3);
    await expect(attempts.getByRole("row").nth(1).textContent()).resolves.toContain("HTTP 503");

    (await receiver).respond = (_delivery, response) => response.writeHead(204).end();
    await callback.getByRole("button", { name: "Redeliver" }).click();
    await callback.getByText("Delivered", { exact: true }).waitFor({ timeout: 15_000 });
    await attempts.getByRole("row").nth(3).getByText("204").waitFor({ timeout: 10_000 });
    await expectAccessible(page);
    await screenshot(page, "run-callbacks");
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    expect(run!.callbackDeliveries[0]!.attempts.map((attempt) => attempt.httpStatus)).toEqual([503, 503, 204]);
  });
});
