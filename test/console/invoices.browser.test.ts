/**
 * The console's whole path in real Chromium against a running docpipe, as a new user takes it: the
 * invoices example built on an empty pipe by clicking and typing into the node forms only (no JSON),
 * saved exactly as the example; tried with a document in test mode, the canvas following the run
 * into its review; the review approved by keyboard, and the run ending with the callback it would
 * have sent.
 */
import { existsSync } from "node:fs";
import { type JsonObject, toJson } from "@bufbuild/protobuf";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { type Run, RunStatus } from "../../gen/docpipe/v1/run_pb.js";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";
import { PDF_INVOICE, textLayerPdf } from "../nodes/invoices.ts";
import { until } from "../support/wait.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer } from "./harness.ts";

type Json = { [key: string]: unknown };

describe.skipIf(!existsSync(CHROMIUM))("the invoices example, built, tried and reviewed in the console", { timeout: 300_000 }, () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let pipeId: string;
  let runId: string;
  const example = invoicesExample(INVOICES_EXAMPLE_DEFAULTS) as { nodes: Json[] };

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Invoice Works", plan: "advanced" });
    organizationId = organization!.id;
    page = await operatorPage(browser, server, { width: 1400, height: 1000 });
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

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
  /** Adds a node of the palette's `label`, renames it `id`, and connects the node before it to it. */
  const add = async (label: string, id: string, after: string | undefined) => {
    await palette(label).click();
    const nodeId = panel().getByLabel("Node id");
    await nodeId.waitFor();
    if ((await nodeId.inputValue()) !== id) {
      await nodeId.fill(id);
      await panel().getByRole("button", { name: "Rename" }).click();
      await panel()
        .getByRole("heading", { name: new RegExp(` ${id}$`) })
        .waitFor();
    }
    if (after !== undefined) {
      await open(after);
      await panel().getByLabel("Connect to").selectOption(id);
      await panel().getByRole("button", { name: "Connect", exact: true }).click();
      await open(id);
    }
  };
  /** Chooses the option whose text matches, as a person reads the list. */
  const choose = async (select: Locator, text: RegExp) => {
    const options = await select.locator("option").allTextContents();
    const label = options.find((option) => text.test(option));
    if (label === undefined) throw new Error(`no option ${text} among ${options.join(", ")}`);
    await select.selectOption({ label });
  };
  /** Types into the CodeMirror editor of a JSONata field, replacing what it holds. */
  const typeExpression = async (scope: Locator, label: string, text: string) => {
    await scope.getByRole("textbox", { name: `${label} (JSONata)` }).click();
    await page.keyboard.press("ControlOrMeta+a");
    await page.keyboard.type(text);
    await page.keyboard.press("Escape");
  };
  /** Fills a list of texts: Add, then the new item's box, for each. */
  const fillList = async (scope: Locator, item: string, values: readonly string[]) => {
    for (const [index, value] of values.entries()) {
      await scope.getByRole("button", { name: `Add ${item.toLowerCase()}`, exact: true }).click();
      await scope.getByRole("textbox", { name: `${item} ${index + 1}`, exact: true }).fill(value);
    }
  };
  const settings = (id: string) => example.nodes.find((each) => each.id === id)!;

  it("builds the invoices example on an empty pipe by clicking and typing into forms only, and saves it exactly", async () => {
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes/new`);
    await page.getByLabel("Name").fill("invoices");
    await page.getByRole("button", { name: /Edit on the canvas/ }).click();
    // The new pipe's HTTP trigger and parse go: the example takes mail.
    for (const id of ["trigger", "parse"]) {
      await open(id);
      await panel().getByRole("button", { name: "Delete node" }).click();
      await expect.poll(() => node(id).count()).toBe(0);
    }

    const email = settings("email").emailTrigger as { allowedSenders: string[]; acceptedFormats: string[]; maxSizeMb: number };
    await add("Email trigger", "email", undefined);
    await fillList(panel(), "Allowed sender", email.allowedSenders);
    for (const format of email.acceptedFormats) await panel().getByRole("checkbox", { name: format, exact: true }).check();
    await panel().getByLabel("Max size (MB)").fill(String(email.maxSizeMb));

    await add("Parse", "parse", "email");

    const classify = settings("classify").classify as { classes: { name: string; rules: Json[] }[]; otherwise: string };
    await add("Classify", "classify", "parse");
    await panel().getByRole("button", { name: "Add class", exact: true }).click();
    const invoiceClass = panel().getByRole("group", { name: "Class 1" });
    await invoiceClass.getByLabel("Name", { exact: true }).fill(classify.classes[0]!.name);
    const [keywordRule, patternRule] = classify.classes[0]!.rules as [{ keywords: string[] }, { pattern: string; weight: number }];
    await invoiceClass.getByRole("button", { name: "Add rule", exact: true }).click();
    await fillList(invoiceClass.getByRole("group", { name: "Rule 1" }), "Keyword", keywordRule.keywords);
    await invoiceClass.getByRole("button", { name: "Add rule", exact: true }).click();
    const second = invoiceClass.getByRole("group", { name: "Rule 2" });
    await second.getByLabel("Pattern", { exact: true }).fill(patternRule.pattern);
    await second.getByLabel("Weight", { exact: true }).fill(String(patternRule.weight));
    await panel().getByLabel("Otherwise", { exact: true }).fill(classify.otherwise);

    await add("Route", "route", "classify");
    await add("Extract", "extract", undefined);
    await add("Validate", "validate", "extract");
    await add("Review", "review", "validate");
    await add("Callback", "accounts", "review");
    await panel().getByLabel("URL").fill(INVOICES_EXAMPLE_DEFAULTS.accountsUrl);
    await add("Callback", "archive", undefined);
    await panel().getByLabel("URL").fill(INVOICES_EXAMPLE_DEFAULTS.archiveUrl);

    // The route: invoices to the extract, anything else (otherwise) to the archive.
    await open("route");
    await panel().getByRole("button", { name: "Add route", exact: true }).click();
    const invoices = panel().getByRole("group", { name: "Route 1" });
    await typeExpression(invoices, "When", "classify.class = 'invoice'");
    await invoices.getByRole("button", { name: "Add to", exact: true }).click();
    await invoices.getByLabel("To 1", { exact: true }).selectOption("extract");
    await panel().getByLabel("Connect to").selectOption("archive");
    await panel().getByRole("button", { name: "Connect", exact: true }).click();

    const extract = settings("extract").extract as { fields: { name: string; labels: string[]; type?: string; required?: boolean }[] };
    await open("extract");
    for (const [index, field] of extract.fields.entries()) {
      await panel().getByRole("button", { name: "Add field", exact: true }).click();
      const group = panel().getByRole("group", { name: `Field ${index + 1}` });
      await group.getByLabel("Name", { exact: true }).fill(field.name);
      if (field.type !== undefined) await choose(group.getByLabel("Type", { exact: true }), new RegExp(`^${field.type.replace("FIELD_TYPE_", "")}$`, "i"));
      if (field.required === true) await group.getByRole("checkbox", { name: "Required" }).check();
      await fillList(group, "Label", field.labels);
    }
    await choose(panel().getByLabel("Date order", { exact: true }), /^DMY$/i);
    await panel().getByRole("checkbox", { name: "Continue on missing" }).check();

    const validate = settings("validate").validate as { select: string; schema: string };
    await open("validate");
    await typeExpression(panel(), "Select", validate.select);
    await panel()
      .getByLabel("Schema", { exact: true })
      .fill(JSON.stringify(JSON.parse(validate.schema), null, 2));
    await panel().getByRole("checkbox", { name: "Continue on invalid" }).check();

    const review = settings("review").review as { when: string; timeoutHours: number };
    await open("review");
    await typeExpression(panel(), "When", review.when);
    await panel().getByLabel("Timeout hours", { exact: true }).fill(String(review.timeoutHours));
    await choose(panel().getByLabel("Timeout decision", { exact: true }), /^Reject$/i);
    await expectAccessible(page);

    await page.getByRole("button", { name: "Create pipe" }).click();
    await page.getByRole("heading", { level: 1, name: "invoices" }).waitFor();
    pipeId = /#\/orgs\/[^/]+\/pipes\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    const { pipe } = await server.clients.pipes.getPipe({ organizationId, pipeId });
    // Validate's schema is compared as a schema: typed across lines, it is the same JSON.
    const saved = toJson(PipelineSchema, pipe!.pipeline!) as { nodes: Json[] };
    const savedValidate = saved.nodes.find((each) => each.id === "validate")!.validate as { schema: string };
    savedValidate.schema = JSON.stringify(JSON.parse(savedValidate.schema));
    // The formats are ticked among fixed values and kept in their order, which means nothing.
    const formats = (pipeline: { nodes: Json[] }) => (pipeline.nodes[0]!.emailTrigger as { acceptedFormats: string[] }).acceptedFormats.sort();
    formats(saved);
    formats(example);
    expect(saved).toEqual(example as JsonObject);
  });

  it("tries it with a document in test mode: the canvas follows the run to its review", async () => {
    await page.getByRole("button", { name: "Turn test mode on to test with a document" }).click();
    // The invoice's date is missing: the validate finds it invalid, and the run waits for a person.
    const withoutDate = PDF_INVOICE.filter((line) => !line.startsWith("Invoice date"));
    await page.getByLabel("Test with a document").setInputFiles({ name: "INV-2026-0042.pdf", mimeType: "application/pdf", buffer: textLayerPdf(withoutDate) });
    await page.getByRole("button", { name: "Test", exact: true }).click();
    // The run settles first, read from the service: a run that ended otherwise names its error here.
    let settled: Run | undefined;
    await until(
      async () => {
        const { runs } = await server.clients.runs.listRuns({ organizationId, pipeId });
        settled = runs[0];
        return settled !== undefined && settled.status !== RunStatus.QUEUED && settled.status !== RunStatus.RUNNING;
      },
      60_000,
      100,
    );
    expect({ status: RunStatus[settled!.status], error: settled!.error }).toEqual({ status: "REVIEW", error: "" });
    const statusOf = async (id: string) => (await node(id).locator(".node-status").textContent()) ?? "";
    await expect.poll(() => statusOf("review"), { timeout: 30_000 }).toBe("waiting");
    expect(await Promise.all(["email", "parse", "classify", "route", "extract", "validate", "accounts"].map(statusOf))).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
      "succeeded",
      "succeeded",
      "succeeded",
      "queued",
    ]);
    await open("validate");
    await expect(panel().getByRole("region", { name: "Run at node validate" }).locator("pre").textContent()).resolves.toContain('"valid": false');
    await expectAccessible(page);
    await screenshot(page, "invoices-tried");
    const { runs } = await server.clients.runs.listRuns({ organizationId, pipeId });
    runId = runs[0]!.id;
    expect(runs.map((each) => each.status)).toEqual([RunStatus.REVIEW]);
  });

  it("approves the review by keyboard: the missing date typed, Ctrl+Enter; the run ends with the callback it would have sent", async () => {
    await page.getByRole("link", { name: "Review", exact: true }).click();
    await page.getByRole("link", { name: "Review INV-2026-0042.pdf" }).click();
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0042.pdf" }).waitFor();
    // The missing required field comes first and has the focus.
    await until(() => page.evaluate<boolean>(`document.activeElement?.labels?.[0]?.textContent === "date"`), 10_000, 50);
    await page.keyboard.type("2026-11-03");
    await expectAccessible(page);
    await page.keyboard.press("Control+Enter");
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.COMPLETED, 60_000, 100);
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    const accounts = run!.steps.find((step) => step.nodeId === "accounts")!;
    expect(accounts.output).toMatchObject({ testMode: true });
    expect(run!.steps.find((step) => step.nodeId === "review")!.output).toMatchObject({ decision: "approve" });
  });
});
