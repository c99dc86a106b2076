/**
 * The pipe editor's canvas in real Chromium against a running docpipe: a pipeline built by adding,
 * connecting, renaming, disconnecting and deleting nodes is saved as drawn; a refused node is marked;
 * the JSON view stays, and a pipe saved as JSON opens on the canvas unchanged.
 */
import { existsSync } from "node:fs";
import { toJson } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("the pipe editor's canvas", () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let pipeId: string;

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Canvas Works", plan: "advanced" });
    organizationId = organization!.id;
    page = await operatorPage(browser, server, { width: 1400, height: 1000 });
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  const saved = async () => toJson(PipelineSchema, (await server.clients.pipes.getPipe({ organizationId, pipeId })).pipe!.pipeline!);
  const node = (id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  const panel = () => page.getByRole("complementary", { name: "Selected node" });

  it("a new pipe on the canvas: its trigger and parse drawn, joined by an edge", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/new`);
    await page.getByLabel("Name").fill("Drawn intake");
    await page.getByRole("button", { name: /Edit on the canvas/ }).click();
    await node("trigger").waitFor();
    await expect(node("trigger").textContent()).resolves.toBe("triggerHTTP trigger");
    await expect(node("parse").textContent()).resolves.toBe("parseParse");
    expect(await page.locator(".react-flow__edge").count()).toBe(1);
    await expectAccessible(page);
  });

  it("add from the palette, connect, rename, delete; the pipe saves as drawn", async () => {
    await page.getByRole("navigation", { name: "Add a node" }).getByRole("button", { name: "Review", exact: true }).click();
    await panel().getByRole("heading", { name: "Review review" }).waitFor();
    expect(await page.locator(".react-flow__edge").count()).toBe(1);
    // Connected by dragging from parse's right handle onto the review node.
    await node("parse").locator(".react-flow__handle.source").dragTo(node("review").locator(".react-flow__handle.target"));
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(2);
    await panel().getByLabel("Node id").fill("check");
    await panel().getByRole("button", { name: "Rename" }).click();
    await node("check").waitFor();
    await page.getByRole("navigation", { name: "Add a node" }).getByRole("button", { name: "Callback", exact: true }).click();
    await node("callback").waitFor();
    // The callback is connected from the panel this time: select check, connect it.
    await node("check").click();
    await panel().getByRole("heading", { name: "Review check" }).waitFor();
    await panel().getByLabel("Connect to").selectOption("callback");
    await panel().getByRole("button", { name: "Connect" }).click();
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(3);
    await expectAccessible(page);
    await screenshot(page, "canvas-new");
    await node("callback").click();
    await panel().getByRole("button", { name: "Delete node" }).click();
    await expect.poll(() => node("callback").count()).toBe(0);
    await page.getByRole("button", { name: "Create pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "Drawn intake" }).waitFor();
    pipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    expect(await saved()).toEqual({
      nodes: [
        { id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
        { id: "parse", parse: {} },
        { id: "check", review: {}, endBranch: true },
      ],
    });
  });

  it("a refused node is marked on the canvas with the service's message; deleting it saves", async () => {
    // A graph the form cannot show opens on the canvas.
    await node("check").waitFor();
    await page.getByRole("navigation", { name: "Add a node" }).getByRole("button", { name: "Route", exact: true }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    const alert = page.getByRole("alert").filter({ hasText: "The pipe was not saved" });
    await expect(alert.textContent()).resolves.toBe(
      "The pipe was not saved: node route, marked on the canvas: pipeline.nodes[3].route.routes: a route node needs at least one route",
    );
    await expect(node("route").locator(".canvas-node").getAttribute("class")).resolves.toContain("invalid");
    await expectAccessible(page);
    await node("route").click();
    await panel().getByRole("button", { name: "Delete node" }).click();
    // Disconnecting parse from check: check is no longer reachable, which the service refuses on check.
    await node("parse").click();
    await panel().getByRole("button", { name: "Disconnect parse from check" }).click();
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(1);
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect(alert.textContent()).resolves.toContain(
      'node check, marked on the canvas: pipeline.nodes[2]: node "check" cannot be reached from the trigger',
    );
    await node("parse").click();
    await panel().getByLabel("Connect to").selectOption("check");
    await panel().getByRole("button", { name: "Connect" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await saved()) as { nodes: unknown[] }).toMatchObject({ nodes: [{}, {}, {}] });
  });

  it("the invoices example opens on the canvas; the JSON view shows it unchanged and back on the canvas it saves unchanged", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    await page.getByRole("button", { name: "Create the invoices example" }).click();
    await page.getByRole("heading", { level: 1, name: "invoices (example)" }).waitFor();
    pipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    const before = await saved();
    await node("archive").waitFor();
    expect(await page.locator(".react-flow__node").count()).toBe(9);
    expect(await page.locator(".react-flow__edge").count()).toBe(8);
    await expect(page.locator(".react-flow__edge-text").allTextContents()).resolves.toEqual(["classify.class = 'invoice'", "otherwise"]);
    await expectAccessible(page);
    await screenshot(page, "canvas");
    await page.getByRole("button", { name: "Edit as JSON" }).click();
    expect(JSON.parse(await page.getByLabel("Pipeline (JSON)").inputValue())).toEqual(before);
    await page.getByRole("button", { name: "Edit on the canvas" }).click();
    await node("archive").waitFor();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await saved()).toEqual(before);
  });
});
