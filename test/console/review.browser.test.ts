/**
 * The Review page in real Chromium against a running docpipe: a run stopped by a review node waits
 * in the queue, a person opens it beside its document, corrects a field and approves; another is
 * rejected with a comment.
 */
import { existsSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { RunStatus, StepStatus } from "../../gen/docpipe/v1/run_pb.js";
import { FieldType } from "../../gen/docpipe/v1/pipe_pb.js";
import { PDF_INVOICE, textLayerPdf } from "../nodes/invoices.ts";
import { until } from "../support/wait.ts";
import { CHROMIUM, type ConsoleServer, expectAccessible, launchChromium, operatorPage, pageFaults, screenshot, startConsoleServer, submit } from "./harness.ts";

describe.skipIf(!existsSync(CHROMIUM))("Review", { timeout: 120_000 }, () => {
  let server: ConsoleServer;
  let page: Page;
  let faults: string[];
  let organizationId: string;
  let keyValue: string;
  let pipeId: string;

  beforeAll(async () => {
    const [started, browser] = await Promise.all([startConsoleServer(), launchChromium()]);
    server = started;
    const { organization } = await server.clients.workspaces.createOrganization({ name: "Acme Accounts", plan: "advanced" });
    organizationId = organization!.id;
    keyValue = (await server.clients.keys.createKey({ organizationId, name: "scanner" })).keyValue;
    const { pipe } = await server.clients.pipes.createPipe({
      organizationId,
      name: "invoices to check",
      pipeline: create(PipelineSchema, {
        nodes: [
          { id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf", "txt"], maxSizeMb: 5 } } },
          { id: "parse", kind: { case: "parse", value: {} } },
          {
            id: "extract",
            kind: {
              case: "extract",
              value: {
                fields: [
                  { name: "number", labels: ["Invoice number"], required: true },
                  { name: "paid", labels: ["Paid"], type: FieldType.BOOLEAN },
                  { name: "reference", labels: ["Customer reference"], required: true },
                ],
                continueOnMissing: true,
              },
            },
          },
          { id: "check", kind: { case: "review", value: {} } },
        ],
      }),
    });
    pipeId = pipe!.id;
    await server.clients.pipes.activatePipe({ organizationId, pipeId });
    page = await operatorPage(browser, server, { width: 1280, height: 900 });
    faults = pageFaults(page);
    return async () => {
      await browser.close();
      await started.close();
    };
  });
  afterAll(() => expect(faults).toEqual([]));

  async function runInReview(fileName: string, document = { bytes: textLayerPdf(PDF_INVOICE), contentType: "application/pdf" }, to = pipeId): Promise<string> {
    const accepted = await submit(server.edgeUrl, to, keyValue, { ...document, fileName });
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.REVIEW, 60_000, 100);
    return runId;
  }

  it("a run in review shows its PDF rendered with each value's source marked; fields are corrected by keyboard and Ctrl+Enter approves, opening the next run", async () => {
    const older = await runInReview("INV-2026-0041.pdf");
    const runId = await runInReview("INV-2026-0042.pdf");
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/pipes`);
    await page.getByRole("link", { name: "Review", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Review" }).waitFor();
    await expectAccessible(page);
    await page.getByRole("link", { name: "Review INV-2026-0042.pdf" }).click();
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0042.pdf" }).waitFor();
    // pdf.js draws the page; the number's mark stands over the ink of its line.
    await page.getByRole("img", { name: "Page 1 of INV-2026-0042.pdf" }).waitFor();
    const mark = page.locator(".mark").filter({ hasText: /^number$/ });
    await mark.waitFor();
    await until(async () => (await inkUnder(page, "number")).dark > 0, 30_000, 100);
    const ink = await inkUnder(page, "number");
    expect(ink.dark / ink.pixels).toBeGreaterThan(0.03);
    // Below the last line of the invoice the page is blank: the mark moved there would cover nothing.
    expect((await inkUnder(page, "number", 0.8)).dark).toBe(0);
    // Fields by name, required and missing first; each with its type and where it was read, read-only.
    const fields = page.getByRole("group", { name: "Fields read by extract" });
    await expect(fields.locator("label").allTextContents()).resolves.toEqual(["reference", "number", "paid"]);
    const number = page.getByLabel("number", { exact: true });
    const provenance = page.getByText("Page 1 · label “Invoice number” · “Invoice number: INV-2026-0042”");
    await expect(provenance.isVisible()).resolves.toBe(true);
    expect((await number.getAttribute("aria-describedby"))!.split(" ")).toContain(await provenance.getAttribute("id"));
    await expect(page.getByText("text, required, not found: type it to add it").isVisible()).resolves.toBe(true);
    await expect(page.getByLabel("paid", { exact: true }).inputValue()).resolves.toBe("no");
    // By keyboard: the first field has the focus; type, Tab to the next, correct it.
    await until(() => hasFocus(page, "reference"), 10_000, 50);
    await page.keyboard.type("PO-7781");
    await page.keyboard.press("Tab");
    await expect(hasFocus(page, "number")).resolves.toBe(true);
    await expect(mark.getAttribute("class")).resolves.toBe("mark active");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type("INV-2026-0043");
    await expectAccessible(page);
    await expect(new AxeBuilder({ page }).analyze().then(({ violations }) => violations.map(({ id, nodes }) => [id, nodes.length]))).resolves.toEqual([]);
    await screenshot(page, "review");
    await page.keyboard.press("Control+Enter");
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0041.pdf" }).waitFor();
    expect(page.url()).toContain(`/review/${older}`);
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.COMPLETED, 60_000, 100);
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    const review = run!.steps.find((step) => step.nodeId === "check")!;
    expect(review.status).toBe(StepStatus.COMPLETED);
    expect(review.output).toMatchObject({ decision: "approve", reviewer: "operator" });
    expect(review.output!.changes).toEqual(expect.arrayContaining([{ path: "$.extract.fields.number", before: "INV-2026-0042", after: "INV-2026-0043" }]));
    expect(review.output!.data).toMatchObject({ extract: { fields: { number: "INV-2026-0043", paid: false, reference: "PO-7781" }, missing: [] } });
  });

  it("a run a validate sent to review opens with the validate's errors and the extract's fields; the other nodes' outputs are folded", async () => {
    const { pipe } = await server.clients.pipes.createPipe({
      organizationId,
      name: "validated invoices",
      pipeline: create(PipelineSchema, {
        nodes: [
          { id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 5 } } },
          { id: "parse", kind: { case: "parse", value: {} } },
          { id: "extract", kind: { case: "extract", value: { fields: [{ name: "number", labels: ["Invoice number"] }], continueOnMissing: true } } },
          {
            id: "validate",
            kind: {
              case: "validate",
              value: { select: "extract.fields", schema: JSON.stringify({ properties: { number: { pattern: "^PO-" } } }), continueOnInvalid: true },
            },
          },
          { id: "check", kind: { case: "review", value: { when: "validate.valid = false" } } },
        ],
      }),
    });
    await server.clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
    const runId = await runInReview("INV-2026-0047.pdf", undefined, pipe!.id);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0047.pdf" }).waitFor();
    const opened = await page
      .locator("details")
      .evaluateAll((groups) => groups.map((group) => [group.querySelector("summary")!.textContent, group.hasAttribute("open")]));
    expect(opened).toEqual([
      ["validate", true],
      ["parse", false],
    ]);
    await expect(page.getByLabel("validate.errors.0.message", { exact: true }).inputValue()).resolves.toMatch(/pattern/);
    await expect(page.getByLabel("number", { exact: true }).isVisible()).resolves.toBe(true);
    await expect(page.getByLabel("parse.text", { exact: true }).isVisible()).resolves.toBe(false);
    await expectAccessible(page);
    await screenshot(page, "review-validated");
  });

  it("a field the step did not find is typed in by the reviewer (or in the data as JSON): it joins the fields and leaves missing", async () => {
    const runId = await runInReview("INV-2026-0045.pdf");
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0045.pdf" }).waitFor();
    const reference = page.getByLabel("reference", { exact: true });
    await expect(reference.inputValue()).resolves.toBe("");
    await reference.fill("PO-7781");
    await expect(reference.inputValue()).resolves.toBe("PO-7781");
    await expectAccessible(page);
    await page.getByRole("button", { name: "Edit as JSON" }).click();
    await expect(page.getByLabel("Data (JSON)").inputValue()).resolves.toContain('"reference": "PO-7781"');
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL((url) => !url.hash.endsWith(runId));
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.COMPLETED, 60_000, 100);
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    const review = run!.steps.find((step) => step.nodeId === "check")!;
    expect(review.output!.data).toMatchObject({ extract: { fields: { number: "INV-2026-0042", reference: "PO-7781" }, missing: [] } });
  });

  it("a number field the step did not find, typed in by the reviewer, joins the fields as a number, as a found one is", async () => {
    const { pipe } = await server.clients.pipes.createPipe({
      organizationId,
      name: "totals to check",
      pipeline: create(PipelineSchema, {
        nodes: [
          { id: "in", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 5 } } },
          { id: "parse", kind: { case: "parse", value: {} } },
          { id: "extract", kind: { case: "extract", value: { fields: [{ name: "quantity", labels: ["Quantity"], type: FieldType.NUMBER }] } } },
          { id: "check", kind: { case: "review", value: {} } },
        ],
      }),
    });
    await server.clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
    const runId = await runInReview("INV-2026-0046.pdf", undefined, pipe!.id);
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0046.pdf" }).waitFor();
    await page.getByLabel("quantity", { exact: true }).fill("3");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForURL((url) => !url.hash.endsWith(runId));
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.COMPLETED, 60_000, 100);
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    // The field is a NUMBER: a found one is 3, not "3"; a string breaks a later `extract.fields.quantity > 2` or a JSON schema.
    expect(run!.steps.find((step) => step.nodeId === "check")!.output!.data).toMatchObject({ extract: { fields: { quantity: 3 }, missing: [] } });
  });

  it("a document the browser does not show is offered as a download", async () => {
    const runId = await runInReview("invoice.txt", { bytes: Buffer.from(PDF_INVOICE.join("\n")), contentType: "text/plain" });
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Review of invoice.txt" }).waitFor();
    const download = page.getByRole("link", { name: "Download invoice.txt" });
    await expect(download.getAttribute("download")).resolves.toBe("invoice.txt");
    const [file] = await Promise.all([page.waitForEvent("download"), download.click()]);
    expect(file.suggestedFilename()).toBe("invoice.txt");
  });

  it("a run in review is rejected with a comment: it ends Failed with review_rejected", async () => {
    const runId = await runInReview("INV-2026-0044.pdf");
    await page.goto(`${server.internalUrl}/console/#/orgs/${organizationId}/review/${runId}`);
    await page.getByRole("heading", { level: 1, name: "Review of INV-2026-0044.pdf" }).waitFor();
    await page.getByLabel("Why reject").fill("Not our supplier");
    await page.getByRole("button", { name: "Reject" }).click();
    await page.waitForURL((url) => !url.hash.endsWith(runId));
    await until(async () => (await server.clients.runs.getRun({ organizationId, runId })).run?.status === RunStatus.FAILED, 60_000, 100);
    const { run } = await server.clients.runs.getRun({ organizationId, runId });
    expect(run!.steps.find((step) => step.nodeId === "check")!.error).toMatch(/^review_rejected: .*Not our supplier/);
  });

  it("a run's document is served to who may read the run: inline for a PDF, by the format in its bytes, sandboxed; 401 without credentials, 404 for another organization", async () => {
    const runId = await runInReview("INV-2026-0045.pdf");
    const url = `${server.internalUrl}/run-documents/${organizationId}/${runId}`;
    const anonymous = await fetch(url);
    expect([anonymous.status, ((await anonymous.json()) as { reason: string }).reason]).toEqual([401, "authentication_required"]);
    const response = await fetch(url, { headers: { authorization: `Bearer ${server.operatorToken}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/pdf");
    expect(response.headers.get("content-disposition")).toBe(`inline; filename="INV-2026-0045.pdf"; filename*=UTF-8''INV-2026-0045.pdf`);
    expect(response.headers.get("content-security-policy")).toContain("sandbox");
    expect(Buffer.from(await response.arrayBuffer())).toEqual(textLayerPdf(PDF_INVOICE));
    const { organization: other } = await server.clients.workspaces.createOrganization({ name: "Other", plan: "advanced" });
    const elsewhere = await fetch(`${server.internalUrl}/run-documents/${other!.id}/${runId}`, {
      headers: { authorization: `Bearer ${server.operatorToken}` },
    });
    expect([elsewhere.status, ((await elsewhere.json()) as { reason: string }).reason]).toEqual([404, "run_not_found"]);
  });
});

/** Whether the field labelled `label` has the focus. */
function hasFocus(page: Page, label: string): Promise<boolean> {
  return page.evaluate<boolean>(`document.activeElement?.labels?.[0]?.textContent === ${JSON.stringify(label)}`);
}

/**
 * The dark pixels of the rendered page under the mark of field `name` (moved down to `top`, a share
 * of the page's height, when given), and all the pixels there: the canvas's own pixels, so a mark
 * off its value reads blank paper. (Run in the page, as text: the tests are typed without the DOM.)
 */
function inkUnder(page: Page, name: string, top?: number): Promise<{ dark: number; pixels: number }> {
  return page.evaluate<{ dark: number; pixels: number }>(`(() => {
    const mark = [...document.querySelectorAll(".mark")].find((element) => element.textContent === ${JSON.stringify(name)});
    const canvas = mark.closest(".page").querySelector("canvas");
    const shown = canvas.getBoundingClientRect();
    const box = mark.getBoundingClientRect();
    const scale = canvas.width / shown.width;
    const y = ${top === undefined ? "box.top - shown.top" : `${top} * shown.height`};
    const { data } = canvas.getContext("2d").getImageData((box.left - shown.left) * scale, y * scale, box.width * scale, box.height * scale);
    let dark = 0;
    for (let index = 0; index < data.length; index += 4) if (data[index + 3] > 0 && data[index] < 128) dark++;
    return { dark, pixels: data.length / 4 };
  })()`);
}
