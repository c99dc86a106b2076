import { randomUUID } from "node:crypto";
import { fromJson } from "@bufbuild/protobuf";
import { createTransport } from "nodemailer";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PipelineSchema, ReviewDecision } from "../../gen/docpipe/v1/pipe_pb.js";
import { loadConfig } from "../../src/platform/config.ts";
import { type EmailServer, emailLimitsOf, startEmailServer } from "../../src/inbound/smtp/email-server.ts";
import { closeOcr } from "../../src/documents/parse/ocr.ts";
import { invoicesExample } from "../../src/runs/pipes/invoices-example.ts";
import { startWorkers, type Workers } from "../../src/runs/engine/worker.ts";
import { type Receiver, startReceiver } from "../callbacks/receiver.ts";
import { PDF_INVOICE, textLayerPdf } from "../nodes/invoices.ts";
import { testDatabaseUrl } from "../support/database.ts";
import { type EdgeHarness, startEdge } from "../support/edge.ts";
import { verifySignature } from "../support/verify-signature.ts";
import { until } from "../support/wait.ts";
import { addSigningSecret, memoryLog, WORKER_ENV, waitForRuns } from "../worker/fixtures.ts";

// The worked example of docs/pipelines.md, end to end as a supplier and an accounts system see it:
// an email with a PDF invoice goes in over SMTP, the worker parses, classifies, extracts and
// validates it in its pool, and a signed callback carrying the fields comes out over HTTP.

const DOMAIN = "in.docpipe.test";
const SUPPLIER = "ap@supplier.example";

let edge: EdgeHarness;
let email: EmailServer;
let workers: Workers;
let accounts: Receiver;
let archive: Receiver;

beforeAll(async () => {
  [accounts, archive] = await Promise.all([startReceiver(), startReceiver()]);
  edge = await startEdge({ CALLBACK_ALLOW_PRIVATE_NETWORKS: "true" });
  email = await startEmailServer({
    clients: edge.clients,
    store: edge.store,
    log: pino({ level: "silent" }),
    domain: DOMAIN,
    host: "127.0.0.1",
    port: 0,
    maxSizeMbLimit: 100,
    ...emailLimitsOf(loadConfig({})),
  });
  workers = startWorkers({ db: edge.deps.db, databaseUrl: await testDatabaseUrl(), config: loadConfig(WORKER_ENV), store: edge.store, log: memoryLog() });
  return async () => {
    await workers.stop();
    await email.close();
    await edge.close();
  };
});
afterAll(closeOcr);

/** An organization with a signing secret and the example pipe, active; the secret's value for checking signatures. */
async function examplePipe(): Promise<{ organizationId: string; pipeId: string; secret: string }> {
  const { organization } = await edge.clients.workspaces.createOrganization({ name: "ACME accounts", plan: "advanced" });
  const organizationId = organization!.id;
  const { workspaces } = await edge.clients.workspaces.listWorkspaces({ organizationId });
  const secret = await addSigningSecret(edge.deps.db, { organizationId, workspaceId: workspaces[0]!.id });
  const pipeline = fromJson(PipelineSchema, invoicesExample({ accountsUrl: accounts.url, archiveUrl: archive.url, allowedSenders: ["@supplier.example"] }));
  const { pipe } = await edge.clients.pipes.createPipe({ organizationId, name: "invoices", pipeline });
  await edge.clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  return { organizationId, pipeId: pipe!.id, secret };
}

async function mail(pipeId: string, subject: string, attachment: { filename: string; content: Buffer; contentType: string }): Promise<string> {
  const transport = createTransport({ host: "127.0.0.1", port: email.port, secure: false, ignoreTLS: true, connectionTimeout: 10_000 });
  const info = await transport.sendMail({
    from: SUPPLIER,
    to: `${pipeId}@${DOMAIN}`,
    subject,
    text: "Please find the document attached.",
    attachments: [attachment],
    messageId: `<${randomUUID()}@supplier.example>`,
  });
  const runId = /accepted as 1 run\(s\): ([0-9a-f-]{36})$/.exec(info.response)?.[1];
  expect(runId, info.response).toBeDefined();
  return runId!;
}

/** The delivery `receiver` got for `runId`, once it has come. */
async function deliveryOf(receiver: Receiver, runId: string) {
  await until(() => receiver.deliveries.some((delivery) => JSON.parse(delivery.body).runId === runId), 60_000);
  return receiver.deliveries.find((delivery) => JSON.parse(delivery.body).runId === runId)!;
}

describe("the worked example: invoices by email", { timeout: 120_000 }, () => {
  it("an email with a PDF invoice becomes a signed callback to accounts carrying the extracted, validated fields", async () => {
    const { pipeId, secret } = await examplePipe();
    const runId = await mail(pipeId, "Invoice INV-2026-0042", {
      filename: "INV-2026-0042.pdf",
      content: textLayerPdf(PDF_INVOICE),
      contentType: "application/pdf",
    });
    await waitForRuns(edge.deps.db, [runId], ["completed"], 60_000);
    const delivery = await deliveryOf(accounts, runId);
    expect(verifySignature(String(delivery.headers["x-docpipe-signature"]), delivery.body, secret)).toBe(true);
    const body = JSON.parse(delivery.body);
    expect(body).toMatchObject({ runId, pipeId, status: "Completed", fileName: "INV-2026-0042.pdf" });
    expect(body.data.classify).toMatchObject({ class: "invoice" });
    expect(body.data.extract.fields).toEqual({
      number: "INV-2026-0042",
      date: "2026-11-03",
      due: "2026-12-03",
      total: { amount: 1334.56, currency: "EUR" },
      paid: false,
    });
    expect(body.data.validate).toEqual({ valid: true, errors: [] });
    expect(body.data.review).toEqual({ required: false });
    expect(archive.deliveries.some((each) => JSON.parse(each.body).runId === runId)).toBe(false);
  });

  it("a letter goes to the archive, and an invoice without a total waits for a person's review, then reaches accounts valid", async () => {
    const { organizationId, pipeId } = await examplePipe();
    const letter = await mail(pipeId, "Hello", {
      filename: "letter.pdf",
      content: textLayerPdf(["Dear Sir or Madam,", "we are moving to a new address on 1 December."]),
      contentType: "application/pdf",
    });
    const incomplete = await mail(pipeId, "Invoice 77", {
      filename: "invoice-77.pdf",
      content: textLayerPdf(["INVOICE", "Invoice number: 77", "Invoice date: 3 Nov 2026"]),
      contentType: "application/pdf",
    });
    await waitForRuns(edge.deps.db, [letter], ["completed"], 60_000);
    const filed = JSON.parse((await deliveryOf(archive, letter)).body);
    expect(filed.data.classify).toMatchObject({ class: "other" });
    expect(filed.data.extract).toBeUndefined();
    await waitForRuns(edge.deps.db, [incomplete], ["review"], 60_000);
    const validate = await edge.deps.db
      .selectFrom("run_steps")
      .select("output")
      .where("run_id", "=", incomplete)
      .where("node_id", "=", "validate")
      .executeTakeFirstOrThrow();
    expect(validate.output).toMatchObject({ valid: false, errors: [{ path: "/total", message: "must have required property 'total'" }] });
    expect(accounts.deliveries.some((each) => JSON.parse(each.body).runId === incomplete)).toBe(false);

    // A person types the total and approves: the fields are checked again, so accounts gets the
    // verdict on what the person approved, not the one that sent it to review.
    const { run } = await edge.clients.runs.getRun({ organizationId, runId: incomplete });
    const shown = run!.steps.find((step) => step.nodeId === "review")!.output!.data as { extract: { fields: object } };
    await edge.clients.runs.resolveReview({
      organizationId,
      runId: incomplete,
      decision: ReviewDecision.APPROVE,
      reviewer: "ana@example.com",
      data: { extract: { ...shown.extract, fields: { ...shown.extract.fields, total: "EUR 1.334,56" }, missing: [] } },
    });
    await waitForRuns(edge.deps.db, [incomplete], ["completed"], 60_000);
    const approved = JSON.parse((await deliveryOf(accounts, incomplete)).body);
    expect(approved.data.extract.fields.total).toEqual({ amount: 1334.56, currency: "EUR" });
    expect(approved.data.validate).toEqual({ valid: true, errors: [] });
    expect(approved.data.review).toMatchObject({
      decision: "approve",
      changes: expect.arrayContaining([{ path: "$.validate.valid", before: false, after: true }]),
    });
  });
});
