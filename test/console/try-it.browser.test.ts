/**
 * Trying a pipe in the editor, in real Chromium against a running docpipe: a document sent to the
 * pipe in test mode runs while the canvas shows each node's status, a node's output is read by
 * selecting it, and the run's data is what expressions evaluate against; the pipe's versions show
 * what changed between two, and an earlier one is restored as a new version.
 */
import { existsSync } from "node:fs";
import { create, toJson } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";
import { PDF_INVOICE, textLayerPdf } from "../nodes/invoices.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("Try it and versions", { timeout: 120_000 }, () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let pipeId: string;
  const pipeline = create(PipelineSchema, {
    nodes: [
      { id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 5 } } },
      { id: "parse", kind: { case: "parse", value: {} } },
      { id: "extract", kind: { case: "extract", value: { fields: [{ name: "number", labels: ["Invoice number"], required: true }] } } },
      { id: "route", kind: { case: "route", value: { routes: [{ when: "extract.fields.number = ''", to: ["skipped"] }], otherwise: ["notify"] } } },
      { id: "skipped", kind: { case: "transform", value: { expression: "'no number'" } }, endBranch: true },
      { id: "notify", kind: { case: "callback", value: { url: "https://hooks.example/invoices" } } },
    ],
  });

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Try Works", plan: "advanced" });
    organizationId = organization!.id;
    pipeId = (await server.clients.pipes.createPipe({ organizationId, name: "Invoices to try", pipeline })).pipe!.id;
    page = await operatorPage(browser, server, { width: 1400, height: 1000 });
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  const node = (id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  const statusOf = async (id: string) => (await node(id).locator(".node-status").textContent()) ?? "";
  const panel = () => page.getByRole("complementary", { name: "Selected node" });
  const testDocument = (token: string | undefined, name = "invoice.pdf") =>
    fetch(`${server.internalUrl}/test-runs/${organizationId}/${pipeId}`, {
      method: "POST",
      headers: { "content-type": "application/pdf", "x-file-name": name, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: textLayerPdf(PDF_INVOICE),
    });
  const refusal = async (response: Response) => [response.status, ((await response.json()) as { reason: string }).reason];

  it("the test document route takes documents only from who may change the pipe, and only while it is in test mode", async () => {
    expect(await refusal(await testDocument(undefined))).toEqual([401, "authentication_required"]);
    expect(await refusal(await testDocument(server.operatorToken))).toEqual([409, "pipe_not_in_test_mode"]);
    await server.clients.pipes.updatePipe({ organizationId, pipeId, testMode: true });
    const notPdf = await fetch(`${server.internalUrl}/test-runs/${organizationId}/${pipeId}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.operatorToken}`, "x-file-name": "notes.txt" },
      body: "plain words",
    });
    expect(await refusal(notPdf)).toEqual([400, "unsupported_format"]);
    const accepted = await testDocument(server.operatorToken);
    expect(accepted.status).toBe(201);
    const { runId } = (await accepted.json()) as { runId: string };
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    expect([run!.pipeId, run!.pipelineVersion, run!.file!.name, run!.file!.format]).toEqual([pipeId, 1, "invoice.pdf", "pdf"]);
    await server.clients.pipes.updatePipe({ organizationId, pipeId, testMode: false });
  });

  it("Test with a document: test mode turned on, the file sent, each node's status shown as the run advances, a node's output on selecting it", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/${pipeId}`);
    await node("notify").waitFor();
    await page.getByRole("button", { name: "Turn test mode on to test with a document" }).click();
    await page
      .getByLabel("Test with a document")
      .setInputFiles({ name: "INV-2026-0042.pdf", mimeType: "application/pdf", buffer: Buffer.from(textLayerPdf(PDF_INVOICE)) });
    await page.getByRole("button", { name: "Test", exact: true }).click();
    // Polled until the run has ended: the branch not taken shows as skipped only then.
    await expect
      .poll(() => Promise.all(["in", "parse", "extract", "route", "skipped", "notify"].map(statusOf)), { timeout: 60_000 })
      .toEqual(["succeeded", "succeeded", "succeeded", "succeeded", "skipped", "succeeded"]);
    await expect.poll(() => page.getByLabel("Run data").locator("option:checked").textContent()).toContain("INV-2026-0042.pdf");
    await node("notify").click();
    const run = panel().getByRole("region", { name: "Run at node notify" });
    await run.getByText("succeeded").waitFor();
    // In test mode the callback records the request it would have sent, and sends nothing.
    await expect(run.locator("pre").textContent()).resolves.toContain('"testMode": true');
    await node("extract").click();
    await expect(panel().getByRole("region", { name: "Run at node extract" }).locator("pre").textContent()).resolves.toContain('"number": "INV-2026-0042"');
    await expectAccessible(page);
    await screenshot(page, "try-it");
    const { runs } = await server.clients.runs.listRuns({ organizationId, pipeId });
    expect(runs.map((each) => each.status)).toEqual([RunStatus.COMPLETED, RunStatus.COMPLETED]);
  });

  it("expressions evaluate against the chosen run's data, or against sample data", async () => {
    await node("skipped").click();
    const result = panel().locator("output.expression-result");
    const editor = panel().getByRole("textbox", { name: "Expression (JSONata)" });
    await editor.click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type("extract.fields.number");
    await expect.poll(() => result.textContent()).toBe('= "INV-2026-0042"');
    await page.getByLabel("Run data").selectOption({ label: "Sample data shaped as the pipeline writes it" });
    await expect.poll(() => result.textContent()).toBe('= ""');
    await expect.poll(() => node("notify").locator(".node-status").count()).toBe(0);
  });

  it("versions: what changed between two, and an earlier one restored as a new version", async () => {
    await node("notify").click();
    await panel().getByLabel("URL").fill("https://hooks.example/checked");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    await page.getByText("Versions: what changed, restore an earlier one").click();
    const versions = page.getByRole("region", { name: "Versions", exact: true });
    await versions.getByRole("cell", { name: "2 (current)" }).waitFor();
    const diff = versions.locator(".diff");
    // Node by node, in the newer version's order, each changed setting before and after.
    expect(await diff.locator(":scope > li").allTextContents()).toEqual([
      `Node skipped changedtransform.expression"'no number'" → "extract.fields.number"`,
      'Node notify changedcallback.url"https://hooks.example/invoices" → "https://hooks.example/checked"',
    ]);
    await versions.scrollIntoViewIfNeeded();
    await expectAccessible(page);
    await screenshot(page, "versions");

    await versions.getByRole("button", { name: "Restore version 1" }).click();
    await versions.getByText("Version 1 restored as version 3.").waitFor();
    const { pipe } = await server.clients.pipes.getPipe({ organizationId, pipeId });
    expect(pipe!.pipelineVersion).toBe(3);
    expect(toJson(PipelineSchema, pipe!.pipeline!)).toEqual(toJson(PipelineSchema, pipeline));
    await versions.getByRole("cell", { name: "3 (current)" }).waitFor();
    // The editor shows the restored pipeline: saving it again changes nothing.
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    const latest = await server.clients.pipes.getPipe({ organizationId, pipeId });
    expect(toJson(PipelineSchema, latest.pipe!.pipeline!)).toEqual(toJson(PipelineSchema, pipeline));
  });
});
