import { MAX_STEP_OUTPUT_BYTES } from "../../src/runs/engine/step-output.ts";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { create, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { ReviewDecision, RouteNodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { RunStatus, type RunStep, StepStatus } from "../../gen/docpipe/v1/run_pb.js";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { decideReview } from "../../src/data/repositories/run-steps.ts";
import { decideExpiredReviews } from "../../src/runs/engine/review-timeouts.ts";
import { startReceiver } from "../callbacks/receiver.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf } from "../support/errors.ts";
import { inMemoryClients } from "../support/services.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, stepsOf, type Tenant, waitForRuns } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const bed = workerBed();
const receiver = await startReceiver();
const { start, until } = bed;
const deliveriesOf = (runId: string) => bed.deliveriesOf(receiver, runId);
const submit = (tenant: Tenant, pipeId: string, name: string, text: string) => bed.submit(tenant, pipeId, name, "txt", Buffer.from(text));

const notify = () => ({ id: "notify", callback: { url: receiver.url } });

describe("chunk", () => {
  it("a parse then a chunk node: the stored step holds the parse's elements in chunks by title, none over the limit", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "pieces", chunk: { maxCharacters: 60 } },
    ]);
    const body = "The first section holds a sentence long enough to need two chunks of sixty.";
    const runId = await submit(tenant, pipeId, "notes.txt", `Introduction\n\n${body}\n\nResults\n\nShort.`);
    start();
    const [run] = await until([runId]);
    expect(run!.status).toBe("completed");
    const step = (await stepsOf(bed.db, runId)).find((candidate) => candidate.node_id === "pieces");
    expect(step?.status).toBe("completed");
    const { chunks } = step!.output as { chunks: { text: string; pages: number[]; elementCount: number }[] };
    expect(chunks.map((chunk) => chunk.text.length <= 60)).toEqual(chunks.map(() => true));
    // A new chunk at each Title: no chunk holds both sections.
    expect(chunks[0]!.text.startsWith("Introduction")).toBe(true);
    expect(chunks.filter((chunk) => chunk.text.includes("Introduction") && chunk.text.includes("Results"))).toEqual([]);
    expect(chunks.at(-1)).toEqual({ text: "Results\n\nShort.", pages: [], elementCount: 2 });
    expect(
      chunks
        .map((chunk) => chunk.text)
        .join(" ")
        .replace(/\s+/g, " "),
    ).toContain("two chunks of sixty.");
  });
});

describe("chunk: the parse on its own branch", () => {
  it("a resumed run's chunk node cuts its own branch's parse, not a parse of a parallel branch put back after it", async () => {
    const tenant = await insertTenant(bed.db);
    // Two parses side by side (the same document read twice, as a pipeline may), a chunk after the first only.
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "fork", transform: { expression: "1" }, next: ["first", "second"] },
      { id: "first", parse: {}, next: ["pieces"] },
      { id: "second", parse: {}, endBranch: true },
      { id: "pieces", chunk: {}, endBranch: true },
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    // A worker that died after both parses, before the chunk step, its lease long expired.
    await bed.db
      .updateTable("runs")
      .set({ status: "running", attempts: 1, lease_owner: "dead", lease_expire_time: new Date(Date.now() - 60_000) })
      .where("id", "=", runId)
      .execute();
    const parsed = (text: string) => JSON.stringify({ format: "txt", text, elements: [{ type: "NarrativeText", text }] });
    await bed.db
      .insertInto("run_steps")
      .values([
        { run_id: runId, position: 0, node_id: "trigger", node_type: "http_trigger", status: "completed", output: JSON.stringify({}) },
        { run_id: runId, position: 1, node_id: "fork", node_type: "transform", status: "completed", output: JSON.stringify(1) },
        { run_id: runId, position: 2, node_id: "first", node_type: "parse", status: "completed", output: parsed("read by first") },
        { run_id: runId, position: 3, node_id: "second", node_type: "parse", status: "completed", output: parsed("read by second") },
      ])
      .execute();
    start();
    const [run] = await until([runId]);
    expect(run!.status).toBe("completed");
    const step = (await stepsOf(bed.db, runId)).find((candidate) => candidate.node_id === "pieces");
    // It was "read by second": the parse put back last in the run data (graph order on resume),
    // whichever branch it is on; the chunk node's only parse is "first".
    expect((step!.output as { chunks: { text: string }[] }).chunks.map((chunk) => chunk.text)).toEqual(["read by first"]);
  });
});

describe("route", () => {
  it("routes an invoice and a letter to different branches that join at one callback", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      {
        id: "by-kind",
        route: { routes: [{ when: "read.text ~> $contains('Invoice')", to: ["invoices"] }], otherwise: ["letters"] },
      },
      { id: "invoices", parse: {}, next: ["notify"] },
      { id: "letters", parse: {}, next: ["notify"] },
      notify(),
    ]);
    const invoice = await submit(tenant, pipeId, "invoice.txt", "Invoice 2026-17, total 42 EUR");
    const letter = await submit(tenant, pipeId, "letter.txt", "Dear Ms Smith, thank you.");
    start();
    const runs = await until([invoice, letter]);
    expect(runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    const nodesRun = async (runId: string) => (await stepsOf(bed.db, runId)).map((step) => `${step.node_id}:${step.status}`);
    expect(await nodesRun(invoice)).toEqual(["trigger:completed", "read:completed", "by-kind:completed", "invoices:completed", "notify:completed"]);
    expect(await nodesRun(letter)).toEqual(["trigger:completed", "read:completed", "by-kind:completed", "letters:completed", "notify:completed"]);
    const [invoiceCallback] = await deliveriesOf(invoice);
    expect(invoiceCallback).toMatchObject({
      status: "Completed",
      data: {
        file: { name: "invoice.txt", format: "txt", size: 29, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
        "by-kind": { route: 0, to: ["invoices"] },
        invoices: { text: "Invoice 2026-17, total 42 EUR" },
      },
    });
    expect(Object.keys(invoiceCallback!.data as object)).not.toContain("letters");
    expect((await deliveriesOf(letter))[0]).toMatchObject({
      data: { "by-kind": { route: "otherwise", to: ["letters"] }, letters: { text: "Dear Ms Smith, thank you." } },
    });
  });

  it("several targets run as parallel branches; a node after both runs once, when both have ended", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "fan", route: { routes: [{ when: "file.format = 'txt'", to: ["left", "right"] }] } },
      { id: "left", parse: {}, next: ["notify"] },
      { id: "right", parse: {}, next: ["notify"] },
      notify(),
    ]);
    const runId = await submit(tenant, pipeId, "both.txt", "both ways");
    start();
    const [run] = await until([runId]);
    const steps = await stepsOf(bed.db, runId);
    expect([run!.status, steps.map((step) => `${step.node_id}:${step.status}`)]).toEqual(["completed", expect.any(Array)]);
    expect(steps.map((step) => step.node_id)).toEqual(["trigger", "fan", "left", "right", "notify"]);
    const notified = steps.find((step) => step.node_id === "notify")!;
    for (const branch of steps.filter((step) => step.node_id === "left" || step.node_id === "right")) {
      expect(branch.end_time!.getTime()).toBeLessThanOrEqual(notified.start_time.getTime());
    }
    expect(await deliveriesOf(runId)).toHaveLength(1);
    expect((await deliveriesOf(runId))[0]).toMatchObject({ data: { left: { text: "both ways" }, right: { text: "both ways" } } });
  });

  it("a route whose expression fails at run time fails its step with the message and position; the callback reports it", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "pick", route: { routes: [{ when: "$notAFunction(file.name)", to: ["notify"] }] } }, notify()]);
    const runId = await submit(tenant, pipeId, "x.txt", "x");
    start();
    const [run] = await until([runId]);
    expect(run).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^step pick \(route\) failed: expression_failed: routes\[0\]\.when at position \d+: /),
    });
    expect((await stepsOf(bed.db, runId))[1]).toMatchObject({ status: "failed", error: expect.stringMatching(/^expression_failed: .*invoke a non-function/) });
    expect((await deliveriesOf(runId))[0]).toMatchObject({ status: "Failed", error: run!.error });
  });

  it("a branch without a matching route or otherwise ends there, and the run completes", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "pick", route: { routes: [{ when: "file.format = 'pdf'", to: ["read"] }] } },
      { id: "read", parse: {} },
    ]);
    const runId = await submit(tenant, pipeId, "x.txt", "x");
    start();
    expect((await until([runId]))[0]!.status).toBe("completed");
    expect((await stepsOf(bed.db, runId)).map((step) => step.node_id)).toEqual(["trigger", "pick"]);
  });
});

describe("a callback before a failure", () => {
  /** The keys of a callback body in the order callbackBody writes them, the error last. */
  const FAILED_KEYS = ["runId", "pipeId", "status", "fileName", "data", "completedAt", "error"];

  it("a step whose output is past its size limit fails output_too_large at its first attempt, before it is stored; the callback reports it", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    // 8 Mi characters and the quotes: one past the limit (a 30 MB output was stored whole, and one PostgreSQL refused was retried at each lease expiry).
    const big = '($double := function($s, $n) { $n = 0 ? $s : $double($s & $s, $n - 1) }; $double("x", 23))';
    const pipeId = await createPipe(bed.db, tenant, [{ id: "big", transform: { expression: big }, next: ["notify"] }, notify()]);
    const runId = await submit(tenant, pipeId, "a.txt", "some text");
    start();
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({
      status: "failed",
      attempts: 1,
      error: `step big (transform) failed: output_too_large: the step's output is ${MAX_STEP_OUTPUT_BYTES + 2} bytes as JSON; a step's output is at most ${MAX_STEP_OUTPUT_BYTES} bytes`,
    });
    const steps = await stepsOf(bed.db, runId);
    expect(steps[1]).toMatchObject({ status: "failed", output: null, error: expect.stringMatching(/^output_too_large: /) });
    expect((await deliveriesOf(runId))[0]).toMatchObject({ status: "Failed", error: ended!.error });
  });

  it("a callback whose run fails at a later step reports the run Failed with its error, with the data it had", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "read", parse: {} }, notify(), { id: "bad", transform: { expression: '$number("abc")' } }]);
    const runId = await submit(tenant, pipeId, "a.txt", "some text");
    start();
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({ status: "failed", error: expect.stringMatching(/^step bad \(transform\) failed: /) });
    const sent = await deliveriesOf(runId);
    expect(sent).toEqual([
      expect.objectContaining({
        status: "Failed",
        error: ended!.error,
        data: expect.objectContaining({ read: expect.objectContaining({ text: "some text" }) }),
      }),
    ]);
    expect(Object.keys(sent[0]!.data as object)).not.toContain("bad");
    expect(Object.keys(sent[0]!)).toEqual(FAILED_KEYS);
  });

  it("a callback written before a failing http_request (with that step's start) reports the run Failed, as does one after it", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      notify(),
      // Nothing listens on port 1: the request fails at once (no retries).
      { id: "fetch", httpRequest: { url: "'http://127.0.0.1:1/nothing'" } },
      { id: "after", callback: { url: receiver.url } },
    ]);
    const runId = await submit(tenant, pipeId, "b.txt", "other text");
    start();
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({ status: "failed", error: expect.stringMatching(/^step fetch \(http_request\) failed: /) });
    const stored = await bed.db
      .selectFrom("callback_deliveries")
      .select(["node_id", "create_time"])
      .where("run_id", "=", runId)
      .orderBy("create_time")
      .execute();
    const fetched = (await stepsOf(bed.db, runId)).find((step) => step.node_id === "fetch")!;
    // The notify delivery was written before the failing step started, with its start.
    expect(stored.map((delivery) => delivery.node_id)).toEqual(["notify", "after"]);
    expect(stored[0]!.create_time.getTime()).toBeLessThanOrEqual(fetched.start_time.getTime());
    const sent = await deliveriesOf(runId);
    expect(sent).toHaveLength(2);
    for (const body of sent) {
      expect(body).toMatchObject({ status: "Failed", error: ended!.error, data: { read: { text: "other text" } } });
      expect(Object.keys(body)).toEqual(FAILED_KEYS);
    }
    const notified = sent.find((body) => !("after" in (body.data as object)))!;
    expect(Object.keys(notified.data as object)).not.toContain("fetch");
  });

  it("a run that completes still reports Completed, without an error", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "read", parse: {} }, notify(), { id: "good", transform: { expression: "read.text" } }]);
    const runId = await submit(tenant, pipeId, "c.txt", "fine");
    start();
    expect((await until([runId]))[0]!.status).toBe("completed");
    const sent = await deliveriesOf(runId);
    expect(sent).toEqual([
      expect.objectContaining({ status: "Completed", data: expect.objectContaining({ read: expect.objectContaining({ text: "fine" }) }) }),
    ]);
    expect(sent[0]).not.toHaveProperty("error");
  });
});

describe("step outputs", () => {
  it("an output that is the run data itself is a snapshot: the run completes, and later steps do not change what earlier ones stored", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      // "$" is the run data: kept as it is, the run data would hold itself.
      { id: "all", transform: { expression: "$" } },
      { id: "seen", transform: { expression: "file" } },
      // JSONata builds objects without a prototype; this one holds the run data and a NUL.
      { id: "wrapped", transform: { expression: '{"all": $, "nul": "a" & $base64decode("AA==") & "b"}' } },
      // Writes the steps before it with its start.
      { id: "call", httpRequest: { url: "'https://example.com/hook'" } },
      { id: "one", transform: { expression: "1" } },
    ]);
    await bed.db.updateTable("pipes").set({ test_mode: true }).where("id", "=", pipeId).execute();
    const runId = await submit(tenant, pipeId, "self.txt", "itself");
    start();
    const [run] = await until([runId]);
    expect(run!.status).toBe("completed");
    const steps = await stepsOf(bed.db, runId);
    expect(steps.map((step) => `${step.node_id}:${step.status}`)).toEqual([
      "trigger:completed",
      "all:completed",
      "seen:completed",
      "wrapped:completed",
      "call:completed",
      "one:completed",
    ]);
    const output = (nodeId: string) => steps.find((step) => step.node_id === nodeId)!.output as Record<string, unknown>;
    expect(Object.keys(output("all"))).toEqual(["file"]);
    expect(output("seen")).toEqual(output("all").file);
    expect(Object.keys(output("wrapped").all as object).sort()).toEqual(["all", "file", "seen"]);
    expect(output("wrapped").nul).toBe("ab");
  });
});

describe("review", () => {
  /** A run of an invoice that stopped for review, with a signing secret for its callback. */
  async function runInReview() {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "check", review: { when: "read.text ~> $contains('total')" } },
      notify(),
    ]);
    const runId = await submit(tenant, pipeId, "invoice.txt", "total 42");
    start();
    await until([runId], ["review"]);
    const notified = { count: 0 };
    const client = inMemoryClients({ ...testDeps(bed.db), runsQueued: { queued: () => void notified.count++ } }).runs;
    return { tenant, runId, client, notified };
  }

  it("a run stops in review, and an approval with a corrected field continues it: the callback carries the correction", async () => {
    const { tenant, runId, client, notified } = await runInReview();
    const { run } = await client.getRun({ organizationId: tenant.organizationId, runId });
    expect(run!.status).toBe(RunStatus.REVIEW);
    const waiting = run!.steps[2]!;
    expect(waiting).toMatchObject({ nodeId: "check", status: StepStatus.WAITING });
    const shown = waiting.output!.data as { read: Record<string, unknown> };
    expect(shown.read.text).toBe("total 42");
    expect(await deliveriesOf(runId)).toEqual([]);

    const { run: decided } = await client.resolveReview({
      organizationId: tenant.organizationId,
      runId,
      decision: ReviewDecision.APPROVE,
      data: { read: { ...shown.read, text: "total 24" } },
      reviewer: "ana@example.com",
    });
    expect(decided!.status).toBe(RunStatus.QUEUED);
    // The workers are told at once, not left to find it at their next poll.
    expect(notified.count).toBe(1);
    const [ended] = await until([runId]);
    expect(ended!.status).toBe("completed");
    const check = (await stepsOf(bed.db, runId))[2]!;
    expect(check).toMatchObject({ status: "completed", end_time: expect.any(Date) });
    expect(check.output).toMatchObject({
      decision: "approve",
      reviewer: "ana@example.com",
      decideTime: expect.any(String),
      changes: [{ path: "$.read.text", before: "total 42", after: "total 24" }],
    });
    const [callback] = await deliveriesOf(runId);
    expect(callback).toMatchObject({ status: "Completed", data: { read: { text: "total 24" }, check: { decision: "approve", reviewer: "ana@example.com" } } });
  });

  it("a rejected review ends the run Failed with step code review_rejected, and the callback reports it", async () => {
    const { tenant, runId, client } = await runInReview();
    await client.resolveReview({ organizationId: tenant.organizationId, runId, decision: ReviewDecision.REJECT, comment: "not our invoice", reviewer: "ana" });
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({ status: "failed", error: "step check (review) failed: review_rejected: not our invoice" });
    expect((await stepsOf(bed.db, runId))[2]).toMatchObject({
      status: "failed",
      error: "review_rejected: not our invoice",
      output: { decision: "reject", reviewer: "ana" },
    });
    expect((await deliveriesOf(runId))[0]).toMatchObject({ status: "Failed", error: ended!.error });
  });

  it("a review whose condition is false passes the run on without stopping", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "check", review: { when: "read.text ~> $contains('total')" } },
    ]);
    const runId = await submit(tenant, pipeId, "letter.txt", "hello");
    start();
    expect((await until([runId]))[0]!.status).toBe("completed");
    expect((await stepsOf(bed.db, runId))[2]).toMatchObject({ status: "completed", output: { required: false } });
  });

  it("ResolveReview refuses what it cannot apply, each with its reason and field", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "check", review: {} },
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([runId], ["review"]);
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const { organizationId } = tenant;
    const refusal = async (call: Promise<unknown>) => {
      const error = await connectErrorOf(call);
      return [Code[error.code], errorInfoOf(error)?.reason, errorInfoOf(error)?.metadata.field ?? errorInfoOf(error)?.metadata.status];
    };
    expect(await refusal(client.resolveReview({ organizationId, runId }))).toEqual(["InvalidArgument", "invalid_argument", "decision"]);
    expect(await refusal(client.resolveReview({ organizationId, runId, decision: ReviewDecision.REJECT }))).toEqual([
      "InvalidArgument",
      "invalid_argument",
      "comment",
    ]);
    expect(await refusal(client.resolveReview({ organizationId, runId, decision: ReviewDecision.APPROVE, data: { file: { name: "other" } } }))).toEqual([
      "InvalidArgument",
      "invalid_argument",
      "data.file",
    ]);
    expect(await refusal(client.resolveReview({ organizationId, runId, decision: ReviewDecision.APPROVE, data: { ghost: 1 } }))).toEqual([
      "InvalidArgument",
      "invalid_argument",
      "data.ghost",
    ]);
    const other = await insertTenant(bed.db);
    expect(await refusal(client.resolveReview({ organizationId: other.organizationId, runId, decision: ReviewDecision.APPROVE }))).toEqual([
      "NotFound",
      "run_not_found",
      undefined,
    ]);
    await client.resolveReview({ organizationId, runId, decision: ReviewDecision.APPROVE });
    // The approved run is queued again; the running worker may already have taken it further.
    const [code, reason, status] = await refusal(client.resolveReview({ organizationId, runId, decision: ReviewDecision.APPROVE }));
    expect([code, reason]).toEqual(["FailedPrecondition", "run_not_in_review"]);
    expect(["queued", "running", "completed"]).toContain(status);
  });

  it("a review past timeout_hours takes its configured decision; one not yet due waits", async () => {
    const tenant = await insertTenant(bed.db);
    const approving = await createPipe(bed.db, tenant, [{ id: "check", review: { timeoutHours: 2, timeoutDecision: "REVIEW_DECISION_APPROVE" } }]);
    const rejecting = await createPipe(bed.db, tenant, [{ id: "check", review: { timeoutHours: 2 } }]);
    const approved = await submit(tenant, approving, "a.txt", "a");
    const rejected = await submit(tenant, rejecting, "b.txt", "b");
    start();
    await until([approved, rejected], ["review"]);
    expect(await decideExpiredReviews(bed.db, new Date(Date.now() + 3_600_000))).toBe(0);
    expect(await decideExpiredReviews(bed.db, new Date(Date.now() + 3 * 3_600_000))).toBe(2);
    const [first, second] = await until([approved, rejected]);
    const byId = new Map([first!, second!].map((run) => [run.id, run]));
    expect(byId.get(approved)!.status).toBe("completed");
    expect(byId.get(rejected)).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/^step check \(review\) failed: review_rejected: no decision before /),
    });
    expect((await stepsOf(bed.db, approved))[1]!.output).toMatchObject({ decision: "approve", reviewer: "timeout" });
  });

  it("a correction of a parallel branch's output holds when the run resumes, whatever order the outputs are put back in", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "fork", transform: { expression: "1" }, next: ["check", "a"] },
      // The condition takes a while (steps of a recursion), so the branch beside it has ended when the review shows the data.
      { id: "check", review: { when: "($f := function($n) { $n = 0 ? true : $f($n - 1) }; $f(300))" }, next: ["notify"] },
      { id: "a", transform: { expression: '"original"' }, endBranch: true },
      notify(),
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([runId], ["review"]);
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const { run } = await client.getRun({ organizationId: tenant.organizationId, runId });
    expect(run!.steps.find((step) => step.nodeId === "check")!.output!.data).toMatchObject({ a: "original" });
    await client.resolveReview({ organizationId: tenant.organizationId, runId, decision: ReviewDecision.APPROVE, data: { a: "corrected" } });
    const [ended] = await until([runId]);
    expect(ended!.status).toBe("completed");
    // The review is put back before "a" (its branch comes first), and a's stored output replaced the correction.
    const [sent] = await deliveriesOf(runId);
    expect(sent!.data).toMatchObject({ a: "corrected" });
  });

  it("a failure on another branch does not wait for a review: the branch paused at it is passed by, and its callback reports the failure", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "fork", transform: { expression: "1" }, next: ["check", "bad"] },
      { id: "check", review: {}, next: ["notify"] },
      { id: "bad", transform: { expression: '$number("abc")' }, endBranch: true },
      notify(),
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({ status: "failed", error: expect.stringMatching(/^step bad \(transform\) failed: /) });
    // The callback after the review was never reached: the failure went unreported.
    const [sent] = await deliveriesOf(runId);
    expect(sent).toMatchObject({ status: "Failed", error: expect.stringMatching(/^step bad \(transform\) failed: /) });
    const steps = await stepsOf(bed.db, runId);
    expect(steps.map((step) => [step.node_id, step.status])).toEqual([
      ["trigger", "completed"],
      ["fork", "completed"],
      ["check", "failed"],
      ["bad", "failed"],
      ["notify", "completed"],
    ]);
  });

  it("a decision after the timeout, before the worker's sweep, is refused as review_expired, and the timeout decision is taken", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "check", review: { timeoutHours: 1 } }]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([runId], ["review"]);
    const later = inMemoryClients(testDeps(bed.db, {}, () => new Date(Date.now() + 2 * 3_600_000))).runs;
    const late = await connectErrorOf(later.resolveReview({ organizationId: tenant.organizationId, runId, decision: ReviewDecision.APPROVE }));
    expect([Code[late.code], errorInfoOf(late)?.reason]).toEqual(["FailedPrecondition", "review_expired"]);
    const [ended] = await until([runId]);
    expect(ended).toMatchObject({ status: "failed", error: expect.stringMatching(/review_rejected: no decision before /) });
    expect((await stepsOf(bed.db, runId))[1]!.output).toMatchObject({ decision: "reject", reviewer: "timeout" });
  });

  it("a run in review can be cancelled, which closes its waiting step", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "check", review: {} }]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([runId], ["review"]);
    const { run } = await inMemoryClients(testDeps(bed.db)).runs.cancelRun({ organizationId: tenant.organizationId, runId });
    expect(run!.status).toBe(RunStatus.CANCELLED);
    expect(run!.steps[1]).toMatchObject({ status: StepStatus.FAILED, error: "the run was cancelled before this step finished" });
  });
});

describe("test mode", () => {
  it("a pipe in test mode sends nothing: its callback step records the request it would have sent, secrets masked", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "notify", callback: { url: receiver.url, method: "CALLBACK_METHOD_PUT", headers: { Authorization: "Bearer s3cr3t-token" } } },
    ]);
    await bed.db.updateTable("pipes").set({ test_mode: true }).where("id", "=", pipeId).execute();
    const before = receiver.deliveries.length;
    const runId = await submit(tenant, pipeId, "note.txt", "hello");
    start();
    const [run] = await until([runId]);
    expect(run!.status).toBe("completed");
    expect(receiver.deliveries.length).toBe(before);
    const notifyStep = (await stepsOf(bed.db, runId))[2]!;
    expect(notifyStep.output).toEqual({
      testMode: true,
      sent: false,
      request: {
        method: "PUT",
        url: `${new URL(receiver.url).origin}/****`,
        headers: { Authorization: "****", "content-type": "application/json", "X-DocPipe-Signature": expect.stringMatching(/^t=\d+,v1=\*\*\*\*$/) },
        body: {
          runId,
          pipeId,
          status: "Completed",
          fileName: "note.txt",
          completedAt: expect.any(String),
          data: expect.objectContaining({ read: expect.any(Object) }),
        },
      },
    });
    expect(JSON.stringify(notifyStep.output)).not.toContain("s3cr3t");
  });
});

describe("test mode: tokens in a callback URL", () => {
  it("the callback step's preview does not store a token carried in the callback URL's path or query (a real callback's step shows only the host)", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    // Chat webhooks carry their token in the path, others in the query (docs/observability.md).
    const url = `${receiver.url}/T0/B0/p4th-t0ken-s3cret?token=qu3ry-t0ken-s3cret`;
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "read", parse: {} },
      { id: "notify", callback: { url } },
    ]);
    await bed.db.updateTable("pipes").set({ test_mode: true }).where("id", "=", pipeId).execute();
    const runId = await submit(tenant, pipeId, "note.txt", "hello");
    start();
    const [run] = await until([runId]);
    expect(run!.status).toBe("completed");
    const stored = JSON.stringify((await stepsOf(bed.db, runId))[2]!.output);
    expect(stored).not.toContain("qu3ry-t0ken-s3cret");
    expect(stored).not.toContain("p4th-t0ken-s3cret");
  });
});

describe("rerun", () => {
  it("RerunRun from a node reuses the earlier steps' outputs and runs that node again; the new run records the run it reran", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "read", parse: {} }, notify()]);
    const firstId = await submit(tenant, pipeId, "note.txt", "first text");
    start();
    await until([firstId]);
    // Marks the earlier parse output: a reused step carries it, a parse done again would not.
    await bed.db
      .updateTable("run_steps")
      .set({ output: JSON.stringify({ text: "reused output" }) })
      .where("run_id", "=", firstId)
      .where("node_id", "=", "read")
      .execute();
    const notified = { count: 0 };
    const client = inMemoryClients({ ...testDeps(bed.db), runsQueued: { queued: () => void notified.count++ } }).runs;
    const { run } = await client.rerunRun({ organizationId: tenant.organizationId, runId: firstId, fromNodeId: "notify" });
    expect(run).toMatchObject({ status: RunStatus.QUEUED, rerunOfRunId: firstId, pipeId });
    expect(notified.count).toBe(1);
    expect(run!.steps.map((step) => [step.nodeId, step.status])).toEqual([
      ["trigger", StepStatus.COMPLETED],
      ["read", StepStatus.COMPLETED],
    ]);
    // Copied steps keep the times they ran at and name the run that executed them.
    const { run: first } = await client.getRun({ organizationId: tenant.organizationId, runId: firstId });
    const times = (steps: RunStep[]) => steps.map((step) => [step.nodeId, step.startTime, step.endTime]);
    expect(times(run!.steps)).toEqual(times(first!.steps.slice(0, 2)));
    expect(run!.steps.map((step) => step.copiedFromRunId)).toEqual([firstId, firstId]);
    const [ended] = await until([run!.id]);
    expect(ended).toMatchObject({
      status: "completed",
      rerun_of: firstId,
      file_id: (await bed.db.selectFrom("runs").select("file_id").where("id", "=", firstId).executeTakeFirstOrThrow()).file_id,
    });
    expect((await deliveriesOf(run!.id))[0]).toMatchObject({ status: "Completed", data: { read: { text: "reused output" } } });
    // The step the rerun executed names no run; a rerun of the rerun names the run that executed what it copies.
    const { run: rerun } = await client.getRun({ organizationId: tenant.organizationId, runId: run!.id });
    expect(rerun!.steps.map((step) => [step.nodeId, step.copiedFromRunId])).toEqual([
      ["trigger", firstId],
      ["read", firstId],
      ["notify", ""],
    ]);
    const { run: again } = await client.rerunRun({ organizationId: tenant.organizationId, runId: run!.id, fromNodeId: "notify" });
    expect(again!.steps.map((step) => [step.nodeId, step.copiedFromRunId])).toEqual([
      ["trigger", firstId],
      ["read", firstId],
    ]);
    await until([again!.id]);

    const { run: whole } = await client.rerunRun({ organizationId: tenant.organizationId, runId: firstId });
    expect(whole!.steps).toEqual([]);
    await until([whole!.id]);
    expect((await deliveriesOf(whole!.id))[0]).toMatchObject({ data: { read: { text: "first text" } } });
  });

  it("RerunRun does again a node whose kind an edit changed: its earlier output is not its kind's", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "x", transform: { expression: "null" } },
      { id: "y", transform: { expression: '"y"' } },
    ]);
    const firstId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([firstId]);
    const { pipes, runs } = inMemoryClients(testDeps(bed.db));
    const { pipe } = await pipes.getPipe({ organizationId: tenant.organizationId, pipeId });
    const edited = pipe!.pipeline!;
    edited.nodes[1]!.kind = { case: "route", value: create(RouteNodeSchema, { routes: [{ when: "true", to: ["y"] }] }) };
    await pipes.updatePipe({ organizationId: tenant.organizationId, pipeId, pipeline: edited });
    const { run } = await runs.rerunRun({ organizationId: tenant.organizationId, runId: firstId, fromNodeId: "y" });
    // The transform's null, copied onto the route, stopped every attempt outside any step.
    expect(run!.steps.map((step) => step.nodeId)).toEqual(["trigger"]);
    const [ended] = await until([run!.id]);
    expect(ended).toMatchObject({ status: "completed" });
    const steps = await stepsOf(bed.db, run!.id);
    expect(steps.map((step) => [step.node_id, step.node_type, step.status])).toEqual([
      ["trigger", "http_trigger", "completed"],
      ["x", "route", "completed"],
      ["y", "transform", "completed"],
    ]);
  });

  it("RerunRun refuses to start after a split: its parts are runs of their own, which a rerun does not copy", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { pagesPerPart: 1 } },
      { id: "read", parse: {} },
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const refused = await connectErrorOf(client.rerunRun({ organizationId: tenant.organizationId, runId, fromNodeId: "read" }));
    expect([Code[refused.code], errorInfoOf(refused)?.reason, errorInfoOf(refused)?.metadata.field]).toEqual([
      "InvalidArgument",
      "invalid_argument",
      "from_node_id",
    ]);
    expect(refused.rawMessage).toMatch(/after the split node "cut"/);
  });

  it("RerunRun refuses a node the run never reached (a branch its route did not take): the copied route output would call the taken branch again", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "pick", route: { routes: [{ when: "file.format = 'txt'", to: ["taken"] }], otherwise: ["other"] } },
      { id: "taken", transform: { expression: '"taken"' }, next: ["after"] },
      { id: "other", transform: { expression: '"other"' }, next: ["after"] },
      { id: "after", transform: { expression: '"after"' } },
    ]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    start();
    await until([runId]);
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const refused = await connectErrorOf(client.rerunRun({ organizationId: tenant.organizationId, runId, fromNodeId: "other" }));
    expect([Code[refused.code], errorInfoOf(refused)?.reason, errorInfoOf(refused)?.metadata.field]).toEqual([
      "FailedPrecondition",
      "node_not_reached",
      "from_node_id",
    ]);
    expect(refused.rawMessage).toMatch(/never reached node "other"/);
    // From a node it reached, or from the start, it reruns.
    const { run } = await client.rerunRun({ organizationId: tenant.organizationId, runId, fromNodeId: "taken" });
    expect(run!.steps.map((step) => step.nodeId)).toEqual(["trigger", "pick"]);
    await until([run!.id]);
  });

  it("RerunRun refuses a run that has not ended: a second live run of the same document", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "read", parse: {} }]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const refused = await connectErrorOf(client.rerunRun({ organizationId: tenant.organizationId, runId }));
    expect([Code[refused.code], errorInfoOf(refused)?.reason, errorInfoOf(refused)?.metadata.status]).toEqual([
      "FailedPrecondition",
      "run_not_finished",
      "queued",
    ]);
  });

  it("RerunRun refuses a node the current pipeline does not have, and another organization's run", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "read", parse: {} }]);
    const runId = await submit(tenant, pipeId, "a.txt", "a");
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const unknown = await connectErrorOf(client.rerunRun({ organizationId: tenant.organizationId, runId, fromNodeId: "ghost" }));
    expect([Code[unknown.code], errorInfoOf(unknown)?.reason, errorInfoOf(unknown)?.metadata.field]).toEqual([
      "InvalidArgument",
      "invalid_argument",
      "from_node_id",
    ]);
    const other = await insertTenant(bed.db);
    const hidden = await connectErrorOf(client.rerunRun({ organizationId: other.organizationId, runId }));
    expect([Code[hidden.code], errorInfoOf(hidden)?.reason]).toEqual(["NotFound", "run_not_found"]);
  });
});

describe("RunService shows each step's output as it was executed", () => {
  it("a transform whose value is not an object (text, a number, a list) is shown by GetRun, not as an empty object", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "text", transform: { expression: "'approved by rule 7'" } },
      { id: "count", transform: { expression: "4711" } },
      { id: "list", transform: { expression: "['a-item', 'b-item']" } },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "a.txt", "txt", Buffer.from("a")));
    start();
    const [ended] = await waitForRuns(bed.db, [runId!], undefined, 60_000);
    expect(ended!.status).toBe("completed");
    // The worker stored what each step produced...
    const stored = new Map((await stepsOf(bed.db, runId!)).map((step) => [step.node_id, step.output]));
    expect([stored.get("text"), stored.get("count"), stored.get("list")]).toEqual(["approved by rule 7", 4711, ["a-item", "b-item"]]);
    // ...and GetRun shows it: RunStep.output is a Struct, for objects; any other value is output_value.
    const { run } = await inMemoryClients(testDeps(bed.db)).runs.getRun({ organizationId: tenant.organizationId, runId: runId! });
    const shown = new Map(run!.steps.map((step) => [step.nodeId, step]));
    for (const [node, value] of [
      ["text", "approved by rule 7"],
      ["count", 4711],
      ["list", ["a-item", "b-item"]],
    ] as const) {
      expect(shown.get(node)!.output).toBeUndefined();
      expect(toJson(ValueSchema, shown.get(node)!.outputValue!)).toEqual(value);
    }
    // An object output is the Struct, as before.
    expect(shown.get("trigger")!.output).toBeDefined();
    expect(shown.get("trigger")!.outputValue).toBeUndefined();
  });
});

describe("a review decision that finds no waiting step", () => {
  it("leaves the run in review: a decision of an already decided review (a concurrent ResolveReview that lost, a stale timeout sweep) does not queue a run waiting at its next review", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "first", review: {} },
      { id: "second", review: {} },
    ]);
    const [runId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "a.txt", "txt", Buffer.from("a")));
    start();
    await waitForRuns(bed.db, [runId!], ["review"], 60_000);
    // ResolveReview B reads the waiting step (position 1) ...
    const firstPosition = (await stepsOf(bed.db, runId!)).find((step) => step.node_id === "first")!.position;
    // ... while ResolveReview A decides it, and the worker takes the run on to the second review.
    await inMemoryClients(testDeps(bed.db)).runs.resolveReview({ organizationId: tenant.organizationId, runId: runId!, decision: ReviewDecision.APPROVE });
    for (;;) {
      const second = (await stepsOf(bed.db, runId!)).find((step) => step.node_id === "second");
      const [run] = await waitForRuns(bed.db, [runId!], ["review", "completed", "failed"], 60_000);
      if (second?.status === "waiting" && run!.status === "review") break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await bed.stop();
    // B's decision of the first review now finds that step decided: it must change nothing.
    const decided = await decideReview(bed.db, runId!, firstPosition, { output: { decision: "approve", reviewer: "late", changes: [] } });
    expect(decided).toBe(false);
    const run = await bed.db.selectFrom("runs").select(["status"]).where("id", "=", runId!).executeTakeFirstOrThrow();
    // The run still waits at "second" (its step is still waiting), so it must still be in review, where
    // ResolveReview and the console's review queue find it; decideReview moved it to 'queued'.
    expect((await stepsOf(bed.db, runId!)).find((step) => step.node_id === "second")!.status).toBe("waiting");
    expect(run.status).toBe("review");
  });
});
