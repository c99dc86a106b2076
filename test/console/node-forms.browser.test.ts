/**
 * The pipe editor's node forms in real Chromium against a running docpipe: a pipeline built on the
 * canvas by clicking and typing into the generated forms only (no JSON) saves as built; a JSONata
 * field completes run-data paths and shows its value or error as one types; a refusal is shown on
 * the field it names.
 */
import { existsSync } from "node:fs";
import { toJson } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("the pipe editor's node forms", () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let pipeId: string;

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Form Works", plan: "advanced" });
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
  const palette = (label: string) => page.getByRole("navigation", { name: "Add a node" }).getByRole("button", { name: label, exact: true });
  /** Selects a node on the canvas: clicked until its form is open (a click while the layout moves may miss). */
  const open = async (id: string) => {
    const heading = panel().getByRole("heading", { name: new RegExp(` ${id}$`) });
    for (let attempt = 0; attempt < 5; attempt++) {
      await node(id).click();
      if (
        await heading.waitFor({ timeout: 3000 }).then(
          () => true,
          () => false,
        )
      )
        return;
    }
    throw new Error(`the form of ${id} did not open`);
  };
  const connectTo = async (target: string) => {
    await panel().getByLabel("Connect to").selectOption(target);
    await panel().getByRole("button", { name: "Connect", exact: true }).click();
  };
  /** The CodeMirror editor of the expression field labelled so. */
  const expression = (label: string) => panel().getByRole("textbox", { name: `${label} (JSONata)` });

  it("trigger, parse, extract of one field and a callback, built in the forms, save as built", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/new`);
    await page.getByLabel("Name").fill("Formed intake");
    await page.getByRole("button", { name: /Edit on the canvas/ }).click();

    await open("trigger");
    await panel().getByRole("heading", { name: "HTTP trigger trigger" }).waitFor();
    // The field's comment in pipe.proto is its help.
    await panel().getByText("Maximum file size in megabytes (1 MB = 1,048,576 bytes).").waitFor();
    await panel().getByRole("checkbox", { name: "png" }).check();
    await panel().getByLabel("Max size (MB)").fill("5");

    await open("parse");
    await panel().getByLabel("Ocr").selectOption({ label: "Never" });

    await palette("Extract").click();
    await panel().getByRole("heading", { name: "Extract extract" }).waitFor();
    await panel().getByLabel("Source").selectOption("parse");
    await panel().getByRole("button", { name: "Add field" }).click();
    const field = panel().getByRole("group", { name: "Field 1" });
    await field.getByLabel("Name").fill("total");
    await field.getByLabel("Type").selectOption({ label: "Money" });
    await field.getByRole("checkbox", { name: "Required" }).check();
    await field.getByRole("button", { name: "Add label" }).click();
    await field.getByRole("textbox", { name: "Label 1" }).fill("Total");
    await field.getByLabel("Currency").fill("EUR");
    await open("parse");
    await connectTo("extract");

    await palette("Callback").click();
    await panel().getByLabel("URL").fill("https://hooks.example/formed");
    await panel().getByLabel("Method").selectOption({ label: "PUT" });
    await panel().getByLabel("Retry count").fill("2");
    await open("extract");
    await connectTo("callback");
    await open("extract");
    await panel().getByRole("group", { name: "Field 1" }).scrollIntoViewIfNeeded();
    await expect.poll(() => page.locator(".react-flow__edge").count()).toBe(3);
    await expectAccessible(page);
    await screenshot(page, "node-form");

    await page.getByRole("button", { name: "Create pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "Formed intake" }).waitFor();
    pipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    expect(await saved()).toEqual({
      nodes: [
        { id: "trigger", httpTrigger: { acceptedFormats: ["pdf", "png"], maxSizeMb: 5 } },
        { id: "parse", parse: { ocr: "OCR_MODE_NEVER" } },
        {
          id: "extract",
          extract: { source: "parse", fields: [{ name: "total", type: "FIELD_TYPE_MONEY", required: true, labels: ["Total"], currency: "EUR" }] },
        },
        { id: "callback", callback: { url: "https://hooks.example/formed", method: "CALLBACK_METHOD_PUT", retryCount: 2 } },
      ],
    });
  });

  it("a JSONata field completes run-data paths and shows the value or the error as one types", async () => {
    await node("callback").waitFor();
    await palette("Review").click();
    await panel().getByRole("heading", { name: "Review review" }).waitFor();
    const when = expression("When");
    await when.click();
    await page.keyboard.type("extract.fi");
    const completion = page.locator(".cm-tooltip-autocomplete");
    await completion.getByText("extract.fields.total").click();
    await expect(when.textContent()).resolves.toBe("extract.fields.total");
    // Tried against run data shaped as the pipeline writes it: the extract's field, empty.
    await page.keyboard.type(' = ""');
    const result = panel().locator("output.expression-result");
    await expect.poll(() => result.textContent()).toBe("= true");
    await page.keyboard.type(" and (");
    await expect.poll(() => result.textContent()).toMatch(/^Error at position \d+: /);
    await page.keyboard.press("Backspace");
    await page.keyboard.type("$count(parse.pages) = 1");
    await expect.poll(() => result.textContent()).toBe("= true");
    await expectAccessible(page);
    await screenshot(page, "expression");
    await open("extract");
    await connectTo("review");
    await open("review");
    await connectTo("callback");
    await open("extract");
    await panel().getByRole("button", { name: "Disconnect extract from callback" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    const nodes = ((await saved()) as { nodes: { id: string }[] }).nodes;
    expect(nodes.find((each) => each.id === "review")).toEqual({
      id: "review",
      review: { when: 'extract.fields.total = "" and $count(parse.pages) = 1' },
      next: ["callback"],
    });
  });

  it("a refusal is shown on the field it names, in the refused node's form", async () => {
    await palette("Route").click();
    await panel().getByRole("button", { name: "Add route" }).click();
    await page.getByRole("button", { name: "Save changes" }).click();
    const route = panel().getByRole("group", { name: "Route 1" });
    await expect(route.locator(".field-error").textContent()).resolves.toMatch(/routes\[0\]\.when: a route needs a condition/);
    await expect(expression("When").first().getAttribute("aria-invalid")).resolves.toBe("true");
    await expectAccessible(page);
    await expression("When").first().click();
    await page.keyboard.type("true");
    await route.getByRole("button", { name: "Add to" }).click();
    await route.getByRole("combobox", { name: "To 1" }).selectOption("callback");
    await open("review");
    await panel().getByRole("button", { name: "Disconnect review from callback" }).click();
    await connectTo("route");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    const nodes = ((await saved()) as { nodes: { id: string }[] }).nodes;
    expect(nodes.find((each) => each.id === "route")).toEqual({ id: "route", route: { routes: [{ when: "true", to: ["callback"] }] } });
  });
});
