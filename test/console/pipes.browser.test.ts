/**
 * Pipes and Runs in real Chromium against a running docpipe: a pipe made in the console's editor
 * decides what the edge accepts, and the run it starts is followed to its end in Runs.
 */
import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLES } from "../formats/fixtures.ts";
import { createActivePipe } from "../support/edge.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, pageFaults, screenshot, operatorPage, startConsoleServer, submit } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("Pipes and Runs", () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let keyValue: string;
  let pipeId: string;
  let runId: string;

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Acme Documents", plan: "advanced" });
    organizationId = organization!.id;
    keyValue = (await server.clients.keys.createKey({ organizationId, name: "uploader" })).keyValue;
    page = await operatorPage(browser, server, { width: 1280, height: 900 });
    faults = pageFaults(page);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  it("an organization without pipes says what to do next", async () => {
    await page.getByText("No pipes here yet").waitFor();
    await expectAccessible(page);
  });

  it("a pipe the service refuses shows the error beside the field (Max size above the limit)", async () => {
    await page.getByRole("link", { name: "New pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "New pipe" }).waitFor();
    await page.getByLabel("Name").fill("PNG intake");
    await page.getByLabel("Description").fill("Scanned receipts from the mobile app.");
    await page.getByRole("checkbox", { name: "pdf", exact: true }).uncheck();
    await page.getByRole("checkbox", { name: "png" }).check();
    const maxSize = page.getByLabel("Max size (MB)");
    await maxSize.fill("5000");
    await page.getByRole("button", { name: "Create pipe" }).click();
    await expect.poll(() => maxSize.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await maxSize.getAttribute("aria-describedby"))!.split(" ");
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(messages.join("\n")).toContain("max_size_mb: must be from 1 to 100");
    await expectAccessible(page);
    // A fraction is held by the browser at the field (whole megabytes): it sent a request that failed to encode, shown above Save.
    await maxSize.fill("2.5");
    await page.getByRole("button", { name: "Create pipe" }).click();
    expect(await maxSize.evaluate((input) => (input as unknown as { validity: { stepMismatch: boolean } }).validity.stepMismatch)).toBe(true);
    expect(await page.getByText("cannot decode").count()).toBe(0);
  });

  it("a PNG-only 1 MB pipe, activated: a PDF is refused (400), a PNG accepted (202)", async () => {
    await page.getByLabel("Max size (MB)").fill("1");
    await page.getByRole("button", { name: "Create pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "PNG intake" }).waitFor();
    pipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    const pipe = (await server.clients.pipes.getPipe({ organizationId, pipeId })).pipe!;
    const trigger = pipe.pipeline!.nodes[0]!.kind;
    expect(trigger.case === "httpTrigger" && { formats: trigger.value.acceptedFormats, maxSizeMb: trigger.value.maxSizeMb }).toEqual({
      formats: ["png"],
      maxSizeMb: 1,
    });
    expect(pipe.description).toBe("Scanned receipts from the mobile app.");

    const curl = await page.getByLabel("Try it with curl").inputValue();
    expect(curl).toContain(`:${new URL(server.edgeUrl).port}/pipes/${pipeId}/trigger`);
    expect(curl).toContain("X-Api-Key: $DOCPIPE_KEY");

    await page.getByRole("button", { name: "Activate" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor();
    await expect(page.locator(".page-head .badge").textContent()).resolves.toBe("Active");
    await expectAccessible(page);
    await screenshot(page, "pipe-editor");

    const refused = await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.pdf);
    expect(refused.status).toBe(400);
    const accepted = await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.png);
    expect(accepted.status).toBe(202);
    runId = ((await accepted.json()) as { runId: string }).runId;
  });

  it("the run appears in Runs, filtered by pipe, and reaches Completed with its parse output", async () => {
    await page.getByRole("link", { name: "Runs of this pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    await expect.poll(() => page.getByLabel("Pipe").inputValue()).toBe(pipeId);
    const row = page.getByRole("row", { name: /sample\.png/ });
    await row.getByText("Completed", { exact: true }).waitFor({ timeout: 15_000 });
    await expectAccessible(page);

    await page.getByLabel("Status").selectOption({ label: "Failed" });
    await page.getByText("No runs match").waitFor();
    await page.getByLabel("Status").selectOption({ label: "Completed" });
    await row.click();
    await page.getByRole("link", { name: /\d{4}-\d\d-\d\d/ }).click();

    await page.getByRole("heading", { level: 1, name: "Run of sample.png" }).waitFor();
    expect(page.url()).toContain(`/runs/${runId}`);
    const facts = await page.locator("dl").first().textContent();
    expect(facts).toContain("png");
    expect(facts).toMatch(/[0-9a-f]{64}/);
    const step = page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: /parse/ }) });
    await step.getByText("Completed", { exact: true }).waitFor();
    // The picture is OCRed too, so the step has its text and its other output, each in its own box.
    const output = step.locator("details", { has: page.getByText("Output", { exact: true }) }).locator("pre");
    await expect(output.textContent()).resolves.toContain('"width"');
    await expectAccessible(page);
    await screenshot(page, "run");
  });

  it("a file name of 255 characters without a space wraps in its cell and on the run's page: nothing runs past the page", async () => {
    const name = `${"x".repeat(251)}.png`;
    const accepted = await submit(server.edgeUrl, pipeId, keyValue, { ...SAMPLES.png, fileName: name });
    expect(accepted.status).toBe(202);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/runs`);
    await page.getByRole("heading", { level: 1, name: "Runs" }).waitFor();
    const row = page.getByRole("row", { name: new RegExp(name.replace(".", "\\.")) });
    await row.waitFor();
    const table = await page
      .locator("table")
      .first()
      .evaluate((element) => element.getBoundingClientRect().right);
    expect(table).toBeLessThanOrEqual(await page.evaluate<number>("document.documentElement.clientWidth"));
    await screenshot(page, "runs-long-name");
    // The run's own page: its heading and its facts wrap the name too; nothing scrolls sideways.
    await row.getByRole("link").click();
    await page.getByRole("heading", { level: 1, name: `Run of ${name}` }).waitFor();
    expect(await page.evaluate<boolean>("document.documentElement.scrollWidth <= document.documentElement.clientWidth")).toBe(true);
    await screenshot(page, "run-long-name");
  });

  it("editing: a callback the service refuses is marked beside Callback URL; a fixed pipe saves; Pause stops its trigger (404)", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/${pipeId}`);
    await page.getByRole("heading", { level: 1, name: "PNG intake" }).waitFor();
    await page.getByRole("checkbox", { name: "Send the result to a URL" }).check();
    const callbackUrl = page.getByLabel("Callback URL");
    await callbackUrl.fill("http://127.0.0.1:9/hook");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => callbackUrl.getAttribute("aria-invalid")).toBe("true");
    const describedBy = (await callbackUrl.getAttribute("aria-describedby"))!.split(" ");
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()));
    expect(messages.join("\n")).toContain("callback url host 127.0.0.1 is not a public address");
    await expectAccessible(page);

    await page.getByRole("checkbox", { name: "Send the result to a URL" }).uncheck();
    const retention = page.getByLabel("Keep runs for (days)");
    await retention.fill("5000");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => retention.getAttribute("aria-invalid")).toBe("true");
    await retention.fill("30");
    await page.getByLabel("Description").fill("Receipts, PNG only.");
    await page.getByRole("checkbox", { name: /Read tables drawn with ruling lines/ }).check();
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
    const saved = (await server.clients.pipes.getPipe({ organizationId, pipeId })).pipe!;
    expect([saved.description, saved.retentionDays]).toEqual(["Receipts, PNG only.", 30]);
    const parse = saved.pipeline!.nodes[1]!.kind;
    expect(parse.case === "parse" && parse.value.rulingLines).toBe(true);

    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByRole("button", { name: "Activate" }).waitFor();
    const paused = await submit(server.edgeUrl, pipeId, keyValue, SAMPLES.png);
    expect([paused.status, ((await paused.json()) as { code: string }).code]).toEqual([404, "pipe_not_found"]);
  });

  it("a run's parse text is collapsed, and long text scrolls in its box", async () => {
    const textPipeId = await createActivePipe(server.clients, organizationId, { acceptedFormats: ["txt"], maxSizeMb: 1 });
    const text = Array.from({ length: 400 }, (_, line) => `line ${line + 1} of the delivery note`).join("\n");
    const accepted = await submit(server.edgeUrl, textPipeId, keyValue, {
      bytes: new TextEncoder().encode(text),
      fileName: "note.txt",
      contentType: "text/plain",
    });
    expect(accepted.status).toBe(202);
    const { runId: textRunId } = (await accepted.json()) as { runId: string };
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/runs/${textRunId}`);
    await page.getByRole("heading", { level: 1, name: "Run of note.txt" }).waitFor();
    const summary = page.getByText(`Text (${text.length.toLocaleString("en")} characters)`);
    await summary.waitFor({ timeout: 15_000 });
    const box = page.locator("details", { has: summary }).locator("pre");
    await expect(box.isVisible()).resolves.toBe(false);
    await summary.click();
    await expect(box.textContent()).resolves.toBe(text);
    const { scrollHeight, clientHeight } = await box.evaluate((element) => ({ scrollHeight: element.scrollHeight, clientHeight: element.clientHeight }));
    expect(scrollHeight).toBeGreaterThan(clientHeight);
    await expectAccessible(page);
  });

  it("a run's parse elements show as a table (type, level, page, text; a table as a table) beside its Markdown", async () => {
    const htmlPipeId = await createActivePipe(server.clients, organizationId, { acceptedFormats: ["html"], maxSizeMb: 1 });
    const html =
      "<html><body><h1>Delivery note</h1><p>Three parcels left the depot today.</p><ul><li>Parcel A</li><li>Parcel B</li></ul>"
      + "<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Bolts</td><td>40</td></tr></table></body></html>";
    const accepted = await submit(server.edgeUrl, htmlPipeId, keyValue, {
      bytes: new TextEncoder().encode(html),
      fileName: "note.html",
      contentType: "text/html",
    });
    expect(accepted.status).toBe(202);
    const { runId: htmlRunId } = (await accepted.json()) as { runId: string };
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/runs/${htmlRunId}`);
    await page.getByRole("heading", { level: 1, name: "Run of note.html" }).waitFor();
    const summary = page.getByText("Elements (5)");
    await summary.waitFor({ timeout: 15_000 });
    await summary.click();
    const rows = page.locator("table.elements > tbody > tr");
    // Each cell's text, or "[table]" for a cell that holds a table (the page's DOM, typed by hand: the tests have no DOM types).
    type Cell = { querySelector(selector: string): unknown; textContent: string | null };
    const cells = await rows.evaluateAll((trs) =>
      trs.map((tr) => Array.from((tr as unknown as { children: ArrayLike<Cell> }).children, (td) => (td.querySelector("table") ? "[table]" : td.textContent))),
    );
    expect(cells).toEqual([
      ["Title 1", "", "Delivery note"],
      ["NarrativeText", "", "Three parcels left the depot today."],
      ["ListItem", "", "Parcel A"],
      ["ListItem", "", "Parcel B"],
      ["Table", "", "[table]"],
    ]);
    const inner = page.locator("table.elements td table");
    await expect(inner.locator("th").allTextContents()).resolves.toEqual(["Item", "Qty"]);
    await expect(inner.locator("tbody td").allTextContents()).resolves.toEqual(["Bolts", "40"]);
    await page.getByText("Markdown", { exact: true }).click();
    const markdown = await page
      .locator("details", { has: page.getByText("Markdown", { exact: true }) })
      .locator("pre")
      .textContent();
    expect(markdown).toContain("# Delivery note");
    expect(markdown).toContain("- Parcel A");
    expect(markdown).toContain("| Bolts | 40 |");
    await expectAccessible(page);
    await screenshot(page, "run-elements");
  });

  it("the invoices example is created by a button and edited as JSON, every node kept: a changed callback URL saves, nothing is dropped", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    const examples = async () =>
      (await server.clients.pipes.listPipes({ organizationId, pageSize: 100 })).pipes.filter((pipe) => pipe.name === "invoices (example)").length;
    const before = await examples();
    // A double click makes one pipe (the button's disabled state comes a render after the second click).
    await page.getByRole("button", { name: "Create the invoices example" }).dblclick();
    await page.getByRole("heading", { level: 1, name: "invoices (example)" }).waitFor();
    expect(await examples()).toBe(before + 1);
    // Its trigger is an email trigger: no trigger URL to curl (it answered 404), but how mail reaches it.
    await page.getByText("This pipe takes documents by email, and this deployment receives no mail").waitFor();
    expect(await page.getByLabel("Trigger URL").count()).toBe(0);
    const examplePipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    // A graph with nodes the form has no fields for opens on the canvas (canvas.browser.test.ts); its JSON view keeps every node.
    await page.getByRole("button", { name: "Edit as JSON" }).click();
    const editor = page.getByLabel("Pipeline (JSON)");
    const text = await editor.inputValue();
    expect(JSON.parse(text).nodes.map((node: { id: string }) => node.id)).toEqual([
      "email",
      "parse",
      "classify",
      "route",
      "extract",
      "validate",
      "review",
      "accounts",
      "archive",
    ]);
    await expect(page.getByRole("button", { name: "Edit with the form" }).count()).resolves.toBe(0);
    await editor.fill(text.replace("https://accounts.example.com/hooks/docpipe", "https://erp.acme.example/hooks/invoices"));
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Saved.").waitFor();
    const saved = (await server.clients.pipes.getPipe({ organizationId, pipeId: examplePipeId })).pipe!.pipeline!;
    expect(saved.nodes).toHaveLength(9);
    const accounts = saved.nodes.find((node) => node.id === "accounts")!.kind;
    expect(accounts.case === "callback" && accounts.value.url).toBe("https://erp.acme.example/hooks/invoices");
    expect(saved.nodes.find((node) => node.id === "extract")!.kind.case).toBe("extract");
    await expectAccessible(page);
    await screenshot(page, "pipe-json");

    await editor.fill('{ "nodes": [ { "id": "in", "nope": {} } ] }');
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => editor.getAttribute("aria-invalid")).toBe("true");
  });
});
