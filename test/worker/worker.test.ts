import { writeFile } from "node:fs/promises";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { verifySignature } from "../support/verify-signature.ts";
import type { DeliveryStatus } from "../../src/data/db/schema.ts";
import { newId } from "../../src/platform/ids.ts";
import { inMemoryClients } from "../support/services.ts";
import { Code } from "@connectrpc/connect";
import { CallbackDeliveryStatus } from "../../gen/docpipe/v1/run_pb.js";
import { claimDelivery, finishAttempt, listRunDeliveries, type NewDelivery, redeliver } from "../../src/data/repositories/callback-deliveries.ts";
import { endStep, startStep } from "../../src/data/repositories/run-steps.ts";
import {
  type Claim,
  type ClaimOptions,
  claimRun,
  finishRun,
  finishRunLeasingDeliveries,
  releaseRun,
  renewLease,
} from "../../src/data/repositories/run-leases.ts";
import { failedRunWrites } from "../../src/runs/nodes/callback/failed-run.ts";
import { startReceiver } from "../callbacks/receiver.ts";
import { pdfOf, textPng } from "../parse/ocr-samples.ts";
import { pathologicalXlsx } from "../parse/hostile-samples.ts";
import { docx, onePagePdf, png, pptx, xlsx } from "../parse/samples.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, stepsOf, waitForRuns } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";
import { sleep, until } from "../support/wait.ts";

const bed = workerBed();
const receiver = await startReceiver();
const { start, running } = bed;

afterEach(() => {
  receiver.respond = (_delivery, response) => response.end("ok");
});

async function runOnce(nodes: object[], name: string, format: string, bytes: Buffer) {
  const tenant = await insertTenant(bed.db);
  const pipeId = await createPipe(bed.db, tenant, nodes);
  const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, name, format, bytes));
  // A lease of its own length, not WORKER_ENV's 1 s (for the takeover tests): on a busy machine a
  // renewal can come late, and the process's other slot would take the run over (a second attempt).
  start({ RUN_LEASE_SECONDS: "30" });
  // Longer than waitForRuns's 8 s, within the test's 20 s: after an OCR'd picture the shared pool
  // starts a fresh process, which takes seconds on a loaded machine.
  const [run] = await waitForRuns(bed.db, [runId!], undefined, 15_000);
  return { tenant, pipeId, run: run!, steps: await stepsOf(bed.db, runId!) };
}

describe("parse runs", () => {
  it.each([
    ["invoice.pdf", "pdf", onePagePdf("Total 42 EUR"), { format: "pdf", pageCount: 1, truncated: false }, "Total 42 EUR"],
    ["photo.png", "png", png(7, 5), { format: "png", width: 7, height: 5, ocrPages: [1], text: "" }, undefined],
    ["letter.docx", "docx", docx(["Dear reader", "Regards"]), { format: "docx", text: "Dear reader\n\nRegards" }, "Dear reader"],
    ["table.csv", "csv", Buffer.from("a,b,c\n1,2,3\n4,5,6\n"), { format: "csv", rows: 3, columns: 3 }, "4,5,6"],
    [
      "sales.xlsx",
      "xlsx",
      xlsx({ sheets: [{ name: "Q1" }, { name: "Q2" }], sharedStrings: ["<t>Revenue</t>"] }),
      { format: "xlsx", sheetCount: 2, sheetNames: ["Q1", "Q2"] },
      "Revenue",
    ],
    ["deck.pptx", "pptx", pptx([[["Agenda"]], [["Thanks"]]]), { format: "pptx", slideCount: 2 }, "Agenda\n\nThanks"],
  ])("a %s run reaches completed with its parse output on the step", async (name, format, bytes, expected, text) => {
    const { run, steps } = await runOnce([{ id: "parse", parse: {} }], name, format, bytes);
    expect(run).toMatchObject({ status: "completed", error: "", attempts: 1, lease_owner: null });
    expect(run.end_time).toBeInstanceOf(Date);
    expect(steps.map((step) => [step.node_id, step.node_type, step.status])).toEqual([
      ["trigger", "http_trigger", "completed"],
      ["parse", "parse", "completed"],
    ]);
    expect(steps[0]!.output).toMatchObject({ name, format, size: bytes.length });
    expect(steps[1]!.output).toMatchObject(expected);
    if (text !== undefined) expect((steps[1]!.output as { text: string }).text).toContain(text);
  });

  it("a scanned picture is read by OCR in the parse node's languages; ocr never leaves it unread", async () => {
    const scan = textPng(["Straße über die Brücke"]);
    const { run, steps } = await runOnce([{ id: "parse", parse: { ocr: "OCR_MODE_AUTO", languages: ["deu"] } }], "scan.png", "png", scan);
    expect(run.status).toBe("completed");
    expect(steps[1]!.output).toMatchObject({ format: "png", ocrPages: [1], text: "Straße über die Brücke" });
    const never = await runOnce([{ id: "parse", parse: { ocr: "OCR_MODE_NEVER" } }], "scan.png", "png", scan);
    expect(never.steps[1]!.output).toEqual({ format: "png", width: 1800, height: 150 });
  });

  it("a PDF that needs a password fails the step and the run with document_encrypted", async () => {
    const { run, steps } = await runOnce([{ id: "parse", parse: {} }], "locked.pdf", "pdf", await pdfOf([{ text: "secret" }], { encrypted: true }));
    expect(run).toMatchObject({ status: "failed", error: expect.stringMatching(/^step parse \(parse\) failed: document_encrypted: /) });
    expect(steps[1]).toMatchObject({ status: "failed", error: expect.stringMatching(/^document_encrypted: /) });
  });

  it("a document that cannot be parsed fails the step and the run with a clear error", async () => {
    const { run, steps } = await runOnce([{ id: "parse", parse: {} }], "broken.pdf", "pdf", Buffer.from("%PDF-1.7 truncated"));
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/^step parse \(parse\) failed: document_corrupt: cannot parse the pdf document/);
    expect(steps[1]).toMatchObject({ status: "failed", error: expect.stringMatching(/^document_corrupt: cannot parse the pdf document/) });
  });

  it("a run whose stored file is missing or corrupt fails with a clear step error", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const corruptId = await addFile(bed.db, bed.store, tenant, "a.txt", "txt", Buffer.from(`corrupt ${tenant.organizationId}`));
    const corrupt = await bed.db.selectFrom("files").select("sha256").where("id", "=", corruptId).executeTakeFirstOrThrow();
    await writeFile(bed.store.pathOf(tenant.organizationId, corrupt.sha256), "tampered");
    const missingId = await addFile(bed.db, bed.store, tenant, "b.txt", "txt", Buffer.from(`missing ${tenant.organizationId}`));
    await bed.db
      .updateTable("files")
      .set({ sha256: "0".repeat(64) })
      .where("id", "=", missingId)
      .execute();
    const runIds = [...(await queueRuns(bed.db, tenant, pipeId, corruptId)), ...(await queueRuns(bed.db, tenant, pipeId, missingId))];
    start();
    const [first, second] = await waitForRuns(bed.db, runIds);
    expect(first!.error).toMatch(/the stored file is corrupt: its sha256 is [0-9a-f]{64}, expected/);
    expect(second!.error).toMatch(/the stored file 0{64} is missing/);
  });

  it("a run can only read bytes its own organization uploaded: a file row naming another organization's sha256 finds nothing", async () => {
    const [owner, intruder] = [await insertTenant(bed.db), await insertTenant(bed.db)];
    const secret = Buffer.from(`owner's text ${owner.organizationId}`);
    const ownerFileId = await addFile(bed.db, bed.store, owner, "secret.txt", "txt", secret);
    const { sha256 } = await bed.db.selectFrom("files").select("sha256").where("id", "=", ownerFileId).executeTakeFirstOrThrow();
    // What a CreateRun for the intruder's organization naming the owner's sha256 records.
    const fileId = newId();
    await bed.db
      .insertInto("files")
      .values({ id: fileId, organization_id: intruder.organizationId, name: "x.txt", content_type: "text/plain", format: "txt", size: secret.length, sha256 })
      .execute();
    const pipeId = await createPipe(bed.db, intruder, [{ id: "parse", parse: {} }]);
    const runIds = await queueRuns(bed.db, intruder, pipeId, fileId);
    start();
    const [run] = await waitForRuns(bed.db, runIds);
    expect(run!.status).toBe("failed");
    expect(run!.error).toMatch(new RegExp(`the stored file ${sha256} is missing`));
    expect(JSON.stringify(await stepsOf(bed.db, runIds[0]!))).not.toContain("owner's text");
  });
});

/** Expects the call to fail with this Connect code and reason. */
async function expectConnectError(call: Promise<unknown>, code: Code, reason: string) {
  const error = await connectErrorOf(call);
  expect([error.code, reasonOf(error)]).toEqual([code, reason]);
}

/** The run's callback deliveries with their attempts. */
function deliveriesOf(runId: string) {
  return listRunDeliveries(bed.db, runId);
}

/** Waits until every delivery of the run is in one of `statuses`; returns them. */
async function settledDeliveries(runId: string, statuses: DeliveryStatus[] = ["delivered", "failed"]) {
  await until(async () => {
    const deliveries = await deliveriesOf(runId);
    return deliveries.length > 0 && deliveries.every((delivery) => statuses.includes(delivery.status));
  });
  return deliveriesOf(runId);
}

/** A callback delivery to the test receiver, as a run's end writes it. */
function leasedDelivery(organizationId: string) {
  return { id: newId(), organizationId, nodeId: "notify", url: receiver.url, method: "POST", headers: {}, timeoutMs: 1000, retries: 2, body: "{}" };
}

/** The row a delivery is written as, for a test that writes one itself. */
function deliveryRow(delivery: ReturnType<typeof leasedDelivery>, runId: string) {
  return {
    id: delivery.id,
    run_id: runId,
    organization_id: delivery.organizationId,
    node_id: delivery.nodeId,
    url: delivery.url,
    method: delivery.method,
    headers: JSON.stringify(delivery.headers),
    timeout_ms: delivery.timeoutMs,
    body: delivery.body,
    status: "pending" as const,
    last_attempt: delivery.retries + 1,
  };
}

describe("callback runs", () => {
  it("a callback reaches the receiver with the payload and a valid signature from each active secret, after the run completed", async () => {
    const tenant = await insertTenant(bed.db);
    const oldSecret = await addSigningSecret(bed.db, tenant);
    const newSecret = await addSigningSecret(bed.db, tenant);
    receiver.deliveries.length = 0;
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "parse", parse: {} },
      { id: "notify", callback: { url: receiver.url, method: "CALLBACK_METHOD_PUT", headers: { "X-Token": "abc" } } },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "note.txt", "txt", Buffer.from("hello")));
    start();
    const [run] = await waitForRuns(bed.db, [runId!]);
    expect(run!.status).toBe("completed");
    const [delivered] = await settledDeliveries(runId!);
    expect(delivered).toMatchObject({ node_id: "notify", status: "delivered", attempts: 1, next_attempt_time: null, lease_owner: null });
    expect(delivered!.attempts_made).toMatchObject([{ number: 1, http_status: 200, error: "", next_attempt_time: null, duration_ms: expect.any(Number) }]);
    const delivery = receiver.deliveries.find((entry) => JSON.parse(entry.body).runId === runId)!;
    expect(delivery).toMatchObject({ method: "PUT", headers: { "x-token": "abc" } });
    expect(JSON.parse(delivery.body)).toEqual({
      runId,
      pipeId,
      status: "Completed",
      fileName: "note.txt",
      completedAt: expect.any(String),
      data: {
        file: { name: "note.txt", format: "txt", size: 5, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        parse: {
          format: "txt",
          text: "hello",
          truncated: false,
          encoding: "utf-8",
          encodingSource: "default",
          elements: [{ type: "Title", text: "hello", level: 1 }],
          markdown: "# hello",
        },
      },
    });
    const signature = String(delivery.headers["x-docpipe-signature"]);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(signature, delivery.body, newSecret)).toBe(true);
    expect(verifySignature(signature, delivery.body, oldSecret)).toBe(true);
    const host = new URL(receiver.url).host;
    expect((await stepsOf(bed.db, runId!))[2]).toMatchObject({ node_type: "callback", status: "completed", output: { deliveryId: delivered!.id, host } });
  });

  it("a receiver that answers 500 twice then 200 gets the callback on the third attempt; each attempt is recorded with the next one's time", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const answers = [500, 500, 200];
    receiver.respond = (_delivery, response) => response.writeHead(answers.shift() ?? 200).end();
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("x")));
    start();
    expect((await waitForRuns(bed.db, [runId!]))[0]!.status).toBe("completed");
    const [delivery] = await settledDeliveries(runId!);
    expect(delivery).toMatchObject({ status: "delivered", attempts: 3 });
    const attempts = delivery!.attempts_made;
    expect(attempts.map((attempt) => [attempt.number, attempt.http_status, attempt.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 200, ""],
    ]);
    // CALLBACK_BACKOFF_MS is 10 here: 10 ms, then 40 ms.
    expect(attempts[0]!.next_attempt_time!.getTime()).toBeGreaterThan(attempts[0]!.start_time.getTime());
    expect(attempts[1]!.next_attempt_time!.getTime() - attempts[1]!.start_time.getTime()).toBeGreaterThanOrEqual(40);
    expect(attempts[2]!.next_attempt_time).toBeNull();
  });

  it("a callback that never gets 2xx fails its delivery, not the run; a failed parse is still reported to the callback", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    receiver.respond = (delivery, response) => response.writeHead(JSON.parse(delivery.body).status === "Failed" ? 200 : 503).end();
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url, retryCount: 1 } }]);
    const failingPipeId = await createPipe(bed.db, tenant, [
      { id: "parse", parse: {} },
      { id: "notify", callback: { url: receiver.url } },
    ]);
    const runIds = [
      ...(await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("y")))),
      ...(await queueRuns(bed.db, tenant, failingPipeId, await addFile(bed.db, bed.store, tenant, "bad.json", "json", Buffer.from("{nope")))),
    ];
    start();
    const runs = await waitForRuns(bed.db, runIds);
    const undelivered = runs.find((run) => run.id === runIds[0])!;
    const parseFailed = runs.find((run) => run.id === runIds[1])!;
    expect(undelivered).toMatchObject({ status: "completed", error: "" });
    const [failed] = await settledDeliveries(undelivered.id);
    expect(failed).toMatchObject({ status: "failed", attempts: 2, next_attempt_time: null });
    expect(failed!.attempts_made.map((attempt) => [attempt.http_status, attempt.error])).toEqual([
      [503, "HTTP 503"],
      [503, "HTTP 503"],
    ]);
    expect(parseFailed.error).toMatch(/^step parse \(parse\) failed: document_corrupt: cannot parse the json document/);
    expect((await settledDeliveries(parseFailed.id))[0]).toMatchObject({ status: "delivered" });
    const report = receiver.deliveries.map((entry) => JSON.parse(entry.body)).find((body) => body.runId === parseFailed.id);
    expect(report).toMatchObject({ status: "Failed", error: parseFailed.error });
  });

  it("a callback is refused without a signing secret, and to a private address unless allowed: the delivery fails at once, the run completes", async () => {
    const tenant = await insertTenant(bed.db);
    const unsigned = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("z"));
    const [noSecret] = await queueRuns(bed.db, tenant, unsigned, fileId);
    start({ CALLBACK_ALLOW_PRIVATE_NETWORKS: "false" });
    expect((await waitForRuns(bed.db, [noSecret!]))[0]!.status).toBe("completed");
    const [unsent] = await settledDeliveries(noSecret!);
    expect(unsent).toMatchObject({ status: "failed", attempts: 1 });
    expect(unsent!.attempts_made[0]!.error).toBe(
      "the organization has no signing secret; create one in the console (Settings, Signing secret) or with SigningSecretService.RotateSigningSecret, then redeliver",
    );
    await addSigningSecret(bed.db, tenant);
    const [privateRun] = await queueRuns(bed.db, tenant, unsigned, fileId);
    const [refused] = await settledDeliveries(privateRun!);
    expect(refused).toMatchObject({ status: "failed", attempts: 1 });
    expect(refused!.attempts_made[0]).toMatchObject({
      http_status: null,
      error: "callback url host 127.0.0.1 is not a public address (an operator may allow private networks: CALLBACK_ALLOW_PRIVATE_NETWORKS=true)",
    });
  });

  it("receivers that never answer hold no worker slot: parse runs complete while their callbacks hang", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    receiver.respond = () => {};
    const hanging = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url, timeoutSeconds: 60 } }]);
    const hangingRuns = await queueRuns(bed.db, tenant, hanging, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("hang")), 3);
    start({ WORKER_CONCURRENCY: "1", CALLBACK_CONCURRENCY: "3" });
    await waitForRuns(bed.db, hangingRuns, ["completed"]);
    await until(() => receiver.deliveries.filter((entry) => hangingRuns.includes(JSON.parse(entry.body).runId)).length === 3);
    const parsePipe = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const parseRuns = await queueRuns(bed.db, tenant, parsePipe, await addFile(bed.db, bed.store, tenant, "y.txt", "txt", Buffer.from("parse")), 3);
    expect((await waitForRuns(bed.db, parseRuns, ["completed"])).map((run) => run.status)).toEqual(["completed", "completed", "completed"]);
    for (const runId of hangingRuns) expect((await deliveriesOf(runId))[0]).toMatchObject({ status: "pending", lease_owner: expect.any(String) });
  });

  it("a delivery whose worker died mid-attempt is retried once its lease expires, and the cut-off attempt is recorded", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    receiver.deliveries.length = 0;
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url, timeoutSeconds: 1 } }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("dead")));
    start({ CALLBACK_CONCURRENCY: "1", WORKER_POLL_MS: "60000" });
    await waitForRuns(bed.db, [runId!], ["completed"]);
    await settledDeliveries(runId!);
    // As if a dead worker had claimed it: a live lease, an attempt started and never ended.
    await redeliver(bed.db, tenant.organizationId, runId!, (await deliveriesOf(runId!))[0]!.id);
    const dead = (await claimDelivery(bed.db, "dead"))!;
    expect(dead.lease.attempt).toBe(2);
    await running.pop()!.stop();
    start({ CALLBACK_CONCURRENCY: "1", WORKER_POLL_MS: "100" });
    await sleep(500);
    expect((await deliveriesOf(runId!))[0]).toMatchObject({ status: "pending", attempts: 2, lease_owner: dead.lease.owner });
    await bed.db
      .updateTable("callback_deliveries")
      .set({ lease_expire_time: new Date(Date.now() - 1000) })
      .where("id", "=", dead.delivery.id)
      .execute();
    const [delivery] = await settledDeliveries(runId!, ["delivered"]);
    expect(delivery!.attempts_made.map((attempt) => [attempt.number, attempt.http_status, attempt.error])).toEqual([
      [1, 200, ""],
      [2, null, "the worker making this attempt stopped before it ended"],
      [3, 200, ""],
    ]);
    expect(await finishAttempt(bed.db, dead.lease, { durationMs: 1, error: "", next: { status: "delivered" } })).toBe(false);
  });

  it("a run's end leases its deliveries to its process, which makes their first attempt without a claim; when every attempt is in use they wait for the queue", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    // The first delivery's receiver answers only when told: it holds the one attempt CALLBACK_CONCURRENCY allows.
    const held: (() => void)[] = [];
    receiver.respond = (_delivery, response) => held.push(() => response.end("ok"));
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const file = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("lease"));
    const log = start({ CALLBACK_CONCURRENCY: "1", WORKER_POLL_MS: "60000" });
    // A first run, answered at once, lets the queue's claim at start end: that claim holds the one attempt meanwhile.
    receiver.respond = (_delivery, response) => response.end("ok");
    const [warmUp] = await queueRuns(bed.db, tenant, pipeId, file);
    await settledDeliveries(warmUp!);
    receiver.respond = (_delivery, response) => held.push(() => response.end("ok"));
    const [first] = await queueRuns(bed.db, tenant, pipeId, file);
    await waitForRuns(bed.db, [first!], ["completed"]);
    await until(() => held.length === 1);
    // Leased to this worker and attempted, with no claim made: its attempt's lease is the run end's.
    const [leased] = await deliveriesOf(first!);
    expect(leased).toMatchObject({ status: "pending", attempts: 1, lease_owner: expect.stringMatching(/^.+:\d+:[0-9a-f]{8}:[0-9a-f-]{36}$/) });
    expect(leased!.lease_expire_time!.getTime()).toBeGreaterThan(Date.now() + 25_000);
    expect(leased!.attempts_made).toMatchObject([{ number: 1, duration_ms: null }]);
    // Started in the statement that ended the run (a claim would be a later transaction, with a later now()).
    const { rows } = await sql<{ same: boolean }>`
      select a.start_time = r.end_time as same from callback_delivery_attempts a join runs r on r.id = ${first!}::uuid
      where a.delivery_id = ${leased!.id}::uuid`.execute(bed.db);
    expect(rows).toEqual([{ same: true }]);
    // The queue's one attempt is in use: the next run's delivery is written for the queue, not leased.
    const [second] = await queueRuns(bed.db, tenant, pipeId, file);
    await waitForRuns(bed.db, [second!], ["completed"]);
    expect((await deliveriesOf(second!))[0]).toMatchObject({ status: "pending", attempts: 0, lease_owner: null, attempts_made: [] });
    receiver.respond = (_delivery, response) => response.end("ok");
    held.shift()!();
    // The first attempt ends; its room goes to the queue, whose slot claims the second (it polls only every minute).
    for (const runId of [first!, second!]) {
      const [delivery] = await settledDeliveries(runId);
      expect(delivery).toMatchObject({ status: "delivered", attempts: 1, lease_owner: null });
      expect(delivery!.attempts_made).toMatchObject([{ number: 1, http_status: 200, error: "" }]);
    }
    expect(log.lines.filter((line) => line.message === "callback attempt")).toHaveLength(3);
  });

  it("a delivery leased with its run's end is retried once its lease expires, if its process died before the attempt ended", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("dies")));
    const claim = (await claimRun(bed.db, { workerId: "host:42:abcd1234", leaseSeconds: 30, maxSlotsPerOrganization: 10 })) as Claim;
    const delivery = leasedDelivery(tenant.organizationId);
    // An earlier attempt of the run wrote the delivery first, under its own id (as a later step's start would).
    const earlier = newId();
    await bed.db
      .insertInto("callback_deliveries")
      .values({ ...deliveryRow(delivery, runId!), id: earlier, body: "old" })
      .execute();
    const leased = await finishRunLeasingDeliveries(bed.db, claim.lease, "completed", "", { deliveries: [delivery] }, "dead:owner");
    expect(leased).toEqual({ ids: new Map([["notify", earlier]]), signingSecrets: [expect.any(Buffer)] });
    expect(await deliveriesOf(runId!)).toMatchObject([
      { id: earlier, status: "pending", attempts: 1, lease_owner: "dead:owner", attempts_made: [{ number: 1 }] },
    ]);
    // Leased: not due for the queue until the lease expires.
    expect(await claimDelivery(bed.db, "probe")).toBeUndefined();
    await bed.db
      .updateTable("callback_deliveries")
      .set({ lease_expire_time: new Date(Date.now() - 1000) })
      .where("id", "=", earlier)
      .execute();
    start();
    const [settled] = await settledDeliveries(runId!, ["delivered"]);
    expect(settled!.attempts_made.map((attempt) => [attempt.number, attempt.http_status, attempt.error])).toEqual([
      [1, null, "the worker making this attempt stopped before it ended"],
      [2, 200, ""],
    ]);
    // A run that is no longer ours writes nothing.
    expect(await finishRunLeasingDeliveries(bed.db, claim.lease, "completed", "", { deliveries: [{ ...delivery, id: newId() }] }, "late")).toBeUndefined();
    expect(await deliveriesOf(runId!)).toHaveLength(1);
  });

  /**
   * A run with a callback whose end (`end`, given the run's lease and a delivery) starts while a cancel
   * of the run holds its row, then commits: what the end returned, and the run's id.
   */
  async function endRacingCancel(end: (lease: Claim["lease"], delivery: NewDelivery) => Promise<unknown>) {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("race")));
    const claim = (await claimRun(bed.db, { workerId: "host:42:abcd1234", leaseSeconds: 30, maxSlotsPerOrganization: 10 })) as Claim;
    const delivery = { ...leasedDelivery(tenant.organizationId), nodeId: "notify" };
    let ending: Promise<unknown> | undefined;
    await bed.db.transaction().execute(async (cancel) => {
      await cancel.updateTable("runs").set({ status: "cancelled", lease_owner: null, lease_expire_time: null }).where("id", "=", runId!).execute();
      // The run's end waits for the cancel's lock on the run, then finds the run no longer ours.
      ending = end(claim.lease, delivery);
      await sleep(300);
    });
    return { ended: await ending, runId: runId! };
  }

  it("a cancel that commits while the run's end waits for the run leaves neither the end nor a leased delivery", async () => {
    const { ended, runId } = await endRacingCancel((lease, delivery) =>
      finishRunLeasingDeliveries(bed.db, lease, "completed", "", { deliveries: [delivery] }, "owner"),
    );
    expect(ended).toBeUndefined();
    expect(await bed.db.selectFrom("runs").select("status").where("id", "=", runId).executeTakeFirstOrThrow()).toEqual({ status: "cancelled" });
    expect(await deliveriesOf(runId)).toEqual([]);
  });

  it("the same race with deliveries left to the queue (no room to lease them): no pending delivery stays on the cancelled run", async () => {
    const { ended, runId } = await endRacingCancel((lease, delivery) => finishRun(bed.db, lease, "completed", "", { deliveries: [delivery] }));
    expect(ended).toBe(false);
    // A delivery written on the snapshot's word stayed pending for ever, never due, and kept retention from removing the run.
    expect(await deliveriesOf(runId)).toEqual([]);
  });

  it("the same race with a delivery written at a later step's start: neither the step nor the delivery is written on the cancelled run", async () => {
    const { ended, runId } = await endRacingCancel((lease, delivery) =>
      startStep(bed.db, lease, { position: 2, nodeId: "parse", nodeType: "parse" }, [], [delivery]),
    );
    expect(ended).toBe(false);
    expect(await deliveriesOf(runId)).toEqual([]);
  });

  it("a callback's delivery is written no later than its step: with the run's end, or before a later step that does I/O", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "early", callback: { url: receiver.url } },
      { id: "parse", parse: {} },
      { id: "late", callback: { url: receiver.url } },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("order")));
    start();
    await waitForRuns(bed.db, [runId!], ["completed"]);
    const deliveries = await settledDeliveries(runId!);
    const steps = await stepsOf(bed.db, runId!);
    for (const nodeId of ["early", "late"]) {
      const delivery = deliveries.find((entry) => entry.node_id === nodeId)!;
      expect(delivery).toMatchObject({ status: "delivered" });
      expect(steps.find((step) => step.node_id === nodeId)).toMatchObject({ status: "completed", output: { deliveryId: delivery.id } });
    }
    // "early" was written before the parse step started; "late" with the run's end.
    const early = deliveries.find((entry) => entry.node_id === "early")!;
    const parse = steps.find((step) => step.node_id === "parse")!;
    expect(early.create_time.getTime()).toBeLessThanOrEqual(parse.start_time.getTime());
    // "late" was leased with the run's end and attempted at once; "early" was claimed by the queue after the end.
    const { rows } = await sql<{ node_id: string; at_end: boolean }>`
      select d.node_id, a.start_time = r.end_time as at_end
      from callback_deliveries d join callback_delivery_attempts a on a.delivery_id = d.id join runs r on r.id = d.run_id
      where d.run_id = ${runId!}::uuid order by d.node_id`.execute(bed.db);
    expect(rows).toEqual([
      { node_id: "early", at_end: false },
      { node_id: "late", at_end: true },
    ]);
  });

  it("a failing run's end makes its deliveries written earlier say Failed with its error, as callbackBody writes it; a completed run's stay as they were", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("ends"));
    const runIds = await queueRuns(bed.db, tenant, pipeId, fileId, 3);
    const claims = new Map<string, Claim>();
    for (const _ of runIds) {
      const claim = (await claimRun(bed.db, { workerId: "host:42:abcd1234", leaseSeconds: 30, maxSlotsPerOrganization: 10 })) as Claim;
      claims.set(claim.run.id, claim);
    }
    const [failing, leasing, completing] = runIds.map((runId) => claims.get(runId!)!);
    // A child run's body, with a part label and data that hold the words a rewrite looks for.
    const payload = (runId: string, extra: Record<string, unknown> = {}) => ({
      runId,
      pipeId,
      parentRunId: newId(),
      partIndex: 1,
      partLabel: 'part "status":"Completed"',
      status: "Completed",
      fileName: "x.txt",
      data: { shape: { status: "Completed", text: '"status":"Completed"' } },
      completedAt: "2026-11-24T10:00:00.000Z",
      ...extra,
    });
    const written = async (claim: Claim, nodeId: string, body: string) => {
      const delivery = { ...leasedDelivery(tenant.organizationId), nodeId, body };
      await bed.db.insertInto("callback_deliveries").values(deliveryRow(delivery, claim.run.id)).execute();
    };
    const bodies = async (claim: Claim) =>
      Object.fromEntries(
        (await bed.db.selectFrom("callback_deliveries").select(["node_id", "body"]).where("run_id", "=", claim.run.id).execute()).map((row) => [
          row.node_id,
          row.body,
        ]),
      );
    const error = 'step bad (transform) failed: "quoted"\nnext line\ttab \u0001 é ✓';
    const early = JSON.stringify(payload(failing!.run.id));
    // Failed already (a branch's callback after the failure), with an escape PostgreSQL refuses in jsonb.
    const reported = JSON.stringify(payload(failing!.run.id, { status: "Failed", error: "lone \ud800" }));
    await written(failing!, "early", early);
    await written(failing!, "reported", reported);
    expect(await finishRun(bed.db, failing!.lease, "failed", error, await failedRunWrites(bed.db, failing!.run.id, error))).toBe(true);
    expect(await bodies(failing!)).toEqual({ early: JSON.stringify({ ...JSON.parse(early), status: "Failed", error }), reported });

    // The deliveries the run's end writes itself are written as given (built Failed by the worker).
    const before = JSON.stringify(payload(leasing!.run.id));
    const late = JSON.stringify(payload(leasing!.run.id, { status: "Failed", error }));
    await written(leasing!, "early", before);
    const writes = await failedRunWrites(bed.db, leasing!.run.id, error, { deliveries: [{ ...leasedDelivery(tenant.organizationId), body: late }] });
    const leased = await finishRunLeasingDeliveries(bed.db, leasing!.lease, "failed", error, writes, "owner");
    expect(leased?.ids.size).toBe(1);
    expect(await bodies(leasing!)).toEqual({ early: JSON.stringify({ ...JSON.parse(before), status: "Failed", error }), notify: late });

    const completed = JSON.stringify(payload(completing!.run.id));
    await written(completing!, "early", completed);
    expect(await finishRun(bed.db, completing!.lease, "completed")).toBe(true);
    expect(await bodies(completing!)).toEqual({ early: completed });
    // A run no longer ours changes nothing.
    expect(await finishRun(bed.db, completing!.lease, "failed", error, await failedRunWrites(bed.db, completing!.run.id, error))).toBe(false);
    expect(await bodies(completing!)).toEqual({ early: completed });
  });

  it("a delivery claim brings its organization's active signing secrets, and says whether another delivery is due", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    await addSigningSecret(bed.db, tenant, 0); // the first one is rotated out at once: it signs no more
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "first", callback: { url: receiver.url } },
      { id: "second", callback: { url: receiver.url } },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("two")));
    start();
    await waitForRuns(bed.db, [runId!], ["completed"]);
    const delivered = await settledDeliveries(runId!);
    await running.pop()!.stop();
    for (const delivery of delivered) await redeliver(bed.db, tenant.organizationId, runId!, delivery.id);
    const first = (await claimDelivery(bed.db, "probe"))!;
    expect(first.delivery).toMatchObject({ run_id: runId, more: true });
    expect(first.delivery.signing_secrets).toHaveLength(1);
    const current = await bed.db
      .selectFrom("signing_secrets")
      .select("ciphertext")
      .where("organization_id", "=", tenant.organizationId)
      .where("expire_time", "is", null)
      .executeTakeFirstOrThrow();
    expect(first.delivery.signing_secrets[0]!.equals(current.ciphertext)).toBe(true);
    expect((await claimDelivery(bed.db, "probe"))!.delivery).toMatchObject({ run_id: runId, more: false });
    expect(await claimDelivery(bed.db, "probe")).toBeUndefined();
  });

  it("RedeliverCallback makes a new attempt of a delivered callback; refused while one is in flight, for a cancelled run, and for an unknown delivery", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    receiver.deliveries.length = 0;
    const pipeId = await createPipe(bed.db, tenant, [{ id: "notify", callback: { url: receiver.url } }]);
    const [runId, cancelledRun] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("again")), 2);
    await bed.db.updateTable("runs").set({ status: "cancelled" }).where("id", "=", cancelledRun!).execute();
    start();
    await waitForRuns(bed.db, [runId!], ["completed"]);
    const [first] = await settledDeliveries(runId!);
    const { runs } = inMemoryClients(testDeps(bed.db));
    const { run } = await runs.redeliverCallback({ organizationId: tenant.organizationId, runId: runId!, deliveryId: first!.id });
    expect(run!.callbackDeliveries[0]).toMatchObject({
      id: first!.id,
      nodeId: "notify",
      status: CallbackDeliveryStatus.PENDING,
      host: new URL(receiver.url).host,
    });
    const [again] = await settledDeliveries(runId!);
    expect(again!.attempts_made.map((attempt) => [attempt.number, attempt.http_status])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    expect(receiver.deliveries.filter((entry) => JSON.parse(entry.body).runId === runId)).toHaveLength(2);
    const { run: shown } = await runs.getRun({ organizationId: tenant.organizationId, runId: runId! });
    expect(shown!.callbackDeliveries[0]).toMatchObject({
      status: CallbackDeliveryStatus.DELIVERED,
      attempts: [
        { number: 1, httpStatus: 200 },
        { number: 2, httpStatus: 200 },
      ],
    });

    await running.pop()!.stop();
    await redeliver(bed.db, tenant.organizationId, runId!, first!.id);
    await claimDelivery(bed.db, "busy");
    await expectConnectError(
      runs.redeliverCallback({ organizationId: tenant.organizationId, runId: runId!, deliveryId: first!.id }),
      Code.FailedPrecondition,
      "callback_delivery_in_progress",
    );
    await expectConnectError(
      runs.redeliverCallback({ organizationId: tenant.organizationId, runId: runId!, deliveryId: newId() }),
      Code.NotFound,
      "callback_delivery_not_found",
    );
    await expectConnectError(
      runs.redeliverCallback({ organizationId: tenant.organizationId, runId: runId!, deliveryId: "nope" }),
      Code.NotFound,
      "callback_delivery_not_found",
    );
    const other = await insertTenant(bed.db);
    await expectConnectError(
      runs.redeliverCallback({ organizationId: other.organizationId, runId: runId!, deliveryId: first!.id }),
      Code.NotFound,
      "run_not_found",
    );
    await bed.db
      .insertInto("callback_deliveries")
      .values({
        id: newId(),
        run_id: cancelledRun!,
        organization_id: tenant.organizationId,
        node_id: "notify",
        url: receiver.url,
        method: "POST",
        headers: "{}",
        timeout_ms: 1000,
        body: "{}",
        status: "cancelled",
        last_attempt: 1,
      })
      .execute();
    const [cancelledDelivery] = await deliveriesOf(cancelledRun!);
    await expectConnectError(
      runs.redeliverCallback({ organizationId: tenant.organizationId, runId: cancelledRun!, deliveryId: cancelledDelivery!.id }),
      Code.FailedPrecondition,
      "callback_delivery_cancelled",
    );
  });
});

describe("leases and cancellation", () => {
  it("a run cancelled while running stops between steps and stays cancelled; its queued callback is cancelled, never sent", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "notify", callback: { url: receiver.url } },
      { id: "parse", parse: {} },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    receiver.deliveries.length = 0;
    start();
    await until(async () => (await stepsOf(bed.db, runId!))[2]?.status === "running");
    await bed.db.updateTable("runs").set({ status: "cancelled", end_time: new Date() }).where("id", "=", runId!).execute();
    await sleep(700); // past a lease renewal (every 1/3 s)
    const [run] = await waitForRuns(bed.db, [runId!], ["cancelled"]);
    expect(run!.status).toBe("cancelled");
    expect((await stepsOf(bed.db, runId!)).map((step) => step.node_id)).toEqual(["trigger", "notify", "parse"]);
    expect(await deliveriesOf(runId!)).toMatchObject([{ node_id: "notify", status: "cancelled", attempts: 0 }]);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it("a resumed run skips completed steps, and a run past its attempt limit fails", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("resume"));
    const [resumed, exhausted] = await queueRuns(bed.db, tenant, pipeId, fileId, 2);
    // A worker that died after the trigger step and during parse, with its lease long expired.
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 1, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", resumed!)
      .execute();
    await bed.db
      .insertInto("run_steps")
      .values([
        { run_id: resumed!, position: 0, node_id: "trigger", node_type: "http_trigger", status: "completed", output: JSON.stringify({ marker: "kept" }) },
        { run_id: resumed!, position: 1, node_id: "parse", node_type: "parse", status: "running", output: null },
      ])
      .execute();
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 5, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", exhausted!)
      .execute();
    start();
    const [first, second] = await waitForRuns(bed.db, [resumed!, exhausted!]);
    expect(first).toMatchObject({ status: "completed", attempts: 2 });
    const steps = await stepsOf(bed.db, resumed!);
    expect(steps.map((step) => [step.status, step.output])).toEqual([
      ["completed", { marker: "kept" }],
      [
        "completed",
        {
          format: "txt",
          text: "resume",
          truncated: false,
          encoding: "utf-8",
          encodingSource: "default",
          elements: [{ type: "Title", text: "resume", level: 1 }],
          markdown: "# resume",
        },
      ],
    ]);
    expect(second).toMatchObject({ status: "failed", error: "the run was abandoned after 5 attempts: each worker that took it stopped before finishing" });
  });

  it("a run past its attempt limit runs only its callbacks, which report it Failed with the completed steps' data; past one more, none", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "parse", parse: {} },
      { id: "shape", transform: { expression: "{'chars': $length(parse.text)}" } },
      { id: "notify", callback: { url: receiver.url } },
    ]);
    const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("poison"));
    const [abandoned, given] = await queueRuns(bed.db, tenant, pipeId, fileId, 2);
    // Five workers died on each; the first had completed its parse. The second's callbacks' attempt died too.
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 5, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", abandoned!)
      .execute();
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 6, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", given!)
      .execute();
    await bed.db
      .insertInto("run_steps")
      .values({ run_id: abandoned!, position: 1, node_id: "parse", node_type: "parse", status: "completed", output: JSON.stringify({ text: "poison" }) })
      .execute();
    start();
    const error = "the run was abandoned after 5 attempts: each worker that took it stopped before finishing";
    const ended = await waitForRuns(bed.db, [abandoned!, given!]);
    expect(ended.map((run) => run.status)).toEqual(["failed", "failed"]);
    expect(ended.map((run) => run.error)).toEqual([error, error]);
    const payloads = () => receiver.deliveries.map((received) => JSON.parse(received.body) as { runId: string });
    await until(() => payloads().some((payload) => payload.runId === abandoned));
    expect(payloads().find((payload) => payload.runId === abandoned)).toMatchObject({ status: "Failed", error, data: { parse: { text: "poison" } } });
    // Nothing but the callback ran: no transform after the failure.
    expect((await stepsOf(bed.db, abandoned!)).map((step) => [step.node_id, step.status])).toEqual([
      ["parse", "completed"],
      ["notify", "completed"],
    ]);
    expect(await stepsOf(bed.db, given!)).toEqual([]);
    expect(payloads().some((payload) => payload.runId === given)).toBe(false);
  });

  it("a run past its attempt limit closes the step it left running", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("left running")));
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 5, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", runId!)
      .execute();
    await bed.db
      .insertInto("run_steps")
      .values({ run_id: runId!, position: 1, node_id: "parse", node_type: "parse", status: "running", output: null })
      .execute();
    start();
    expect((await waitForRuns(bed.db, [runId!]))[0]!.status).toBe("failed");
    expect(await stepsOf(bed.db, runId!)).toMatchObject([{ status: "failed", error: "the run ended before this step finished", end_time: expect.any(Date) }]);
  });

  it("a database error while failing an abandoned run is logged, and the worker slot goes on", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, []);
    const fileId = await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("abandoned"));
    const [abandoned] = await queueRuns(bed.db, tenant, pipeId, fileId);
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 5, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", abandoned!)
      .execute();
    const refuse = `docpipe_test_refuse_${abandoned!.replaceAll("-", "")}`;
    await sql`create function ${sql.id(refuse)}() returns trigger language plpgsql as $$ begin raise exception 'refused for the test'; end $$`.execute(bed.db);
    await sql`create trigger ${sql.id(refuse)} before update on runs for each row
      when (old.id = ${sql.lit(abandoned!)}::uuid and new.status = 'failed') execute function ${sql.id(refuse)}()`.execute(bed.db);
    try {
      // The abandoned run holds its organization's slot until its lease expires: the cap leaves room for the next.
      const log = start({ WORKER_CONCURRENCY: "1", MAX_SLOTS_PER_ORGANIZATION: "2" });
      await until(() => log.lines.some((line) => line.message === "failing an abandoned run broke off; it is retried when its lease expires"));
      // The only slot is still claiming: a new run completes.
      const [next] = await queueRuns(bed.db, tenant, pipeId, fileId);
      expect((await waitForRuns(bed.db, [next!], ["completed"]))[0]!.status).toBe("completed");
    } finally {
      await sql`drop trigger ${sql.id(refuse)} on runs`.execute(bed.db);
      await sql`drop function ${sql.id(refuse)}()`.execute(bed.db);
    }
    expect((await waitForRuns(bed.db, [abandoned!]))[0]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^the run was abandoned after 5 attempts/),
    });
  });

  it("claims skip a run another transaction holds, and never take a live lease", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, []);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("claim")));
    const options = { workerId: "a", leaseSeconds: 30, maxSlotsPerOrganization: 10 };
    const claim = (await claimRun(bed.db, options)) as Claim;
    expect(claim?.run).toMatchObject({ id: runId, status: "running", lease_owner: claim?.lease.owner, attempts: 1 });
    expect(claim?.lease).toEqual({ runId, owner: expect.stringMatching(/^a:[0-9a-f-]{36}$/) });
    expect(await claimRun(bed.db, { ...options, workerId: "b" })).toBeUndefined();
    expect(await claimRun(bed.db, options)).toBeUndefined();
  });

  it("a run claimed again by the same worker process after its lease expired is lost to its first holder", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, []);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "x.txt", "txt", Buffer.from("takeover")));
    const options: ClaimOptions = { workerId: "host:42:abcd1234", leaseSeconds: 30, maxSlotsPerOrganization: 10 };
    const trigger = { position: 0, nodeId: "trigger", nodeType: "http_trigger" };
    const first = (await claimRun(bed.db, options)) as Claim;
    expect(await startStep(bed.db, first.lease, trigger)).toBe(true);
    // The first slot stalls past its lease; another slot of the same process takes the run.
    await bed.db
      .updateTable("runs")
      .set({ lease_expire_time: new Date(Date.now() - 1000) })
      .where("id", "=", runId!)
      .execute();
    const second = (await claimRun(bed.db, options)) as Claim;
    expect(second.run).toMatchObject({ id: runId, attempts: 2, lease_owner: second.lease.owner });
    expect(second.lease.owner).toMatch(/^host:42:abcd1234:/);
    expect(second.lease.owner).not.toBe(first.lease.owner);

    expect(await renewLease(bed.db, first.lease, 30)).toBe(false);
    expect(await endStep(bed.db, first.lease, 0, { output: { by: "first" } })).toBe(false);
    expect(await startStep(bed.db, first.lease, { position: 1, nodeId: "parse", nodeType: "parse" })).toBe(false);
    const route = { node: { position: 1, nodeId: "route", nodeType: "route" }, result: { output: { by: "first" } } };
    expect(await finishRun(bed.db, first.lease, "completed", "", { steps: [route] })).toBe(false);
    await releaseRun(bed.db, first.lease);
    const held = await bed.db.selectFrom("runs").selectAll().where("id", "=", runId!).executeTakeFirstOrThrow();
    expect(held).toMatchObject({ status: "running", lease_owner: second.lease.owner, attempts: 2 });
    expect(await stepsOf(bed.db, runId!)).toMatchObject([{ position: 0, status: "running", output: null }]);

    expect(await renewLease(bed.db, second.lease, 30)).toBe(true);
    expect(await endStep(bed.db, second.lease, 0, { output: { by: "second" } })).toBe(true);
    // The steps that did no I/O are written with the run's end, in the same statement.
    expect(await finishRun(bed.db, second.lease, "completed", "", { steps: [{ ...route, result: { output: { by: "second" } } }] })).toBe(true);
    expect(await stepsOf(bed.db, runId!)).toMatchObject([
      { position: 0, status: "completed", output: { by: "second" } },
      { position: 1, node_id: "route", status: "completed", output: { by: "second" }, end_time: expect.any(Date) },
    ]);
    expect(await bed.db.selectFrom("runs").select("status").where("id", "=", runId!).executeTakeFirstOrThrow()).toEqual({ status: "completed" });
  });

  it("a worker slot whose run is taken over by its own process stops without writing anything more", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    const log = start({ WORKER_CONCURRENCY: "2", MAX_SLOTS_PER_ORGANIZATION: "2" });
    const workers = running.at(-1)!;
    // The slow parse holds the first slot in that step.
    await until(async () => (await stepsOf(bed.db, runId!))[1]?.status === "running");
    const holder = await bed.db.selectFrom("runs").select("lease_owner").where("id", "=", runId!).executeTakeFirstOrThrow();
    expect(holder.lease_owner).toMatch(new RegExp(`^${workers.id}:[0-9a-f-]{36}$`));
    // Expire the lease and claim the run as another slot of that process would (retried if a renewal got in between).
    let takeover: Awaited<ReturnType<typeof claimRun>>;
    do {
      await bed.db
        .updateTable("runs")
        .set({ lease_expire_time: new Date(Date.now() - 1000) })
        .where("id", "=", runId!)
        .execute();
      takeover = await claimRun(bed.db, { workerId: workers.id, leaseSeconds: 30, maxSlotsPerOrganization: 10 });
    } while (takeover === undefined || takeover === "contended");
    await until(() => log.lines.some((line) => line.message === "run stopped: cancelled or taken over"));
    const run = await bed.db.selectFrom("runs").selectAll().where("id", "=", runId!).executeTakeFirstOrThrow();
    // The process's other slot may have claimed the expired lease first (then the loop took it from that slot).
    expect(takeover.run.attempts).toBeGreaterThanOrEqual(2);
    expect(run).toMatchObject({ status: "running", lease_owner: takeover.lease.owner, attempts: takeover.run.attempts });
    expect((await stepsOf(bed.db, runId!)).map((step) => [step.node_id, step.status])).toEqual([
      ["trigger", "completed"],
      ["parse", "running"],
    ]);
    expect(await finishRun(bed.db, takeover.lease, "completed")).toBe(true);
  });

  it("stop gives an unfinished run back to the queue without using up an attempt", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    start();
    const [held] = await waitForRuns(bed.db, [runId!], ["running"]);
    expect(held!.lease_owner?.startsWith(`${running.at(-1)!.id}:`)).toBe(true);
    await running.pop()!.stop();
    expect((await waitForRuns(bed.db, [runId!], ["queued"]))[0]).toMatchObject({ status: "queued", attempts: 0, lease_owner: null });
  });
});

describe("wake-ups", () => {
  // Workers that poll only once a minute: a run finished within seconds was announced by a notification.
  const SLOW_POLL = { WORKER_POLL_MS: "60000" };

  it("a run created through CreateRun wakes an idle worker at once, not at its next poll", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, []);
    const bytes = Buffer.from(`%PDF-1.7 wake ${tenant.organizationId}`);
    const fileId = await addFile(bed.db, bed.store, tenant, "a.pdf", "pdf", bytes);
    const file = await bed.db.selectFrom("files").selectAll().where("id", "=", fileId).executeTakeFirstOrThrow();
    start(SLOW_POLL);
    await sleep(300); // the slots have found nothing and sleep
    const { run } = await inMemoryClients(testDeps(bed.db)).trigger.createRun({
      organizationId: tenant.organizationId,
      pipeId,
      pipelineVersion: 1,
      file: { name: file.name, contentType: file.content_type, format: file.format, size: BigInt(file.size), sha256: file.sha256 },
    });
    expect((await waitForRuns(bed.db, [run!.id], ["completed"], 5000))[0]).toMatchObject({ status: "completed" });
  });

  it("a run given back by a stopping worker wakes another worker at once", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "parse", parse: {} }]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "slow.xlsx", "xlsx", pathologicalXlsx()));
    start(SLOW_POLL);
    await waitForRuns(bed.db, [runId!], ["running"]);
    const first = running.pop()!;
    start(SLOW_POLL);
    const second = running.at(-1)!;
    await sleep(300);
    await first.stop();
    // Taken by the second worker long before its next poll, a minute away.
    await until(async () => {
      const run = await bed.db.selectFrom("runs").select(["status", "lease_owner"]).where("id", "=", runId!).executeTakeFirstOrThrow();
      return run.status === "running" && run.lease_owner?.startsWith(`${second.id}:`) === true;
    }, 10_000);
    expect((await bed.db.selectFrom("runs").select("attempts").where("id", "=", runId!).executeTakeFirstOrThrow()).attempts).toBe(1);
  });
});
