import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";
import { startReceiver } from "../callbacks/receiver.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf } from "../support/errors.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { textTiff } from "../parse/ocr-samples.ts";
import { textPdf } from "../support/pdfs.ts";
import { inMemoryClients } from "../support/services.ts";
import { addFile, addSigningSecret, createPipe, insertTenant, queueRuns, stepsOf, type Tenant } from "./fixtures.ts";
import { workerBed } from "../support/worker-bed.ts";

const bed = workerBed({ env: { SPLIT_MAX_PARTS: "5" } });
const receiver = await startReceiver();
const { start, until } = bed;
const deliveriesOf = (runId: string) => bed.deliveriesOf(receiver, runId);

/** A bundle of three letters, each starting on a separator sheet: 9 pages. */
const BUNDLE = [
  "SEPARATOR Acme",
  "Acme page 2",
  "Acme page 3",
  "SEPARATOR Globex",
  "Globex page 2",
  "Globex page 3",
  "SEPARATOR Initech",
  "Initech 2",
  "Initech 3",
];

async function submitPdf(tenant: Tenant, pipeId: string, pages: string[]): Promise<string> {
  return bed.submit(tenant, pipeId, "bundle.pdf", "pdf", await textPdf(pages));
}

function childrenOf(parentRunId: string) {
  return bed.db.selectFrom("runs").selectAll().where("parent_run_id", "=", parentRunId).orderBy("part_index").execute();
}

const notify = () => ({ id: "notify", callback: { url: receiver.url } });

describe("split and merge", () => {
  it("a split beside another branch waits for it before the run waits for its parts: an http_request there is sent once", async () => {
    const slow = (delivery: { body: string }, response: import("node:http").ServerResponse) =>
      delivery.body.includes("side-effect") ? setTimeout(() => response.end("{}"), 1500) : response.end("ok");
    receiver.respond = slow;
    try {
      const tenant = await insertTenant(bed.db);
      const pipeId = await createPipe(bed.db, tenant, [
        { id: "fork", transform: { expression: "1" }, next: ["cut", "req"] },
        { id: "cut", split: { pagesPerPart: 1 }, endBranch: true },
        { id: "req", httpRequest: { url: JSON.stringify(receiver.url), body: '{"kind": "side-effect"}' } },
      ]);
      const runId = await submitPdf(tenant, pipeId, ["one", "two"]);
      start();
      const [ended] = await until([runId]);
      expect(ended).toMatchObject({ status: "completed" });
      // The split committed the run to its parts while the request was in flight: the request's step
      // could not be written, and the resumed run sent it again.
      expect(receiver.deliveries.filter((delivery) => delivery.body.includes("side-effect"))).toHaveLength(1);
      const steps = await stepsOf(bed.db, runId);
      expect(steps.find((step) => step.node_id === "req")).toMatchObject({ status: "completed" });
      expect(await childrenOf(runId)).toHaveLength(2);
    } finally {
      receiver.respond = (_delivery, response) => response.end("ok");
    }
  });

  it("a 9-page PDF split at its separator pages makes 3 child runs, merged back into one callback", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { atText: "separator" } },
      { id: "read", parse: {} },
      { id: "gather", merge: {} },
      notify(),
    ]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    const [parent] = await until([parentId]);
    expect(parent!.status).toBe("completed");
    const children = await childrenOf(parentId);
    expect(children.map(({ status, part_index, part_label, start_node_id }) => ({ status, part_index, part_label, start_node_id }))).toEqual([
      { status: "completed", part_index: 0, part_label: "SEPARATOR Acme", start_node_id: "cut" },
      { status: "completed", part_index: 1, part_label: "SEPARATOR Globex", start_node_id: "cut" },
      { status: "completed", part_index: 2, part_label: "SEPARATOR Initech", start_node_id: "cut" },
    ]);
    expect((await stepsOf(bed.db, parentId)).map((step) => `${step.node_id}:${step.status}`)).toEqual([
      "trigger:completed",
      "cut:completed",
      "gather:completed",
      "notify:completed",
    ]);
    // A child starts after the split and stops before the merge: it neither splits again nor merges.
    expect((await stepsOf(bed.db, children[1]!.id)).map((step) => `${step.node_id}:${step.status}`)).toEqual(["cut:completed", "read:completed"]);
    for (const child of children) expect(await deliveriesOf(child.id)).toEqual([]);
    const [callback] = await deliveriesOf(parentId);
    const parts = (callback!.data as { gather: { parts: Record<string, unknown>[] } }).gather.parts;
    expect(parts.map(({ runId, index, label, status }) => ({ runId, index, label, status }))).toEqual(
      children.map((child) => ({ runId: child.id, index: child.part_index, label: child.part_label, status: "Completed" })),
    );
    expect(parts[1]!.data).toMatchObject({
      file: { name: "bundle-part-2.pdf", format: "pdf", pageCount: 3 },
      cut: { parentRunId: parentId, index: 1, firstPage: 4, lastPage: 6 },
      read: { text: expect.stringContaining("Globex page 3") },
    });
    expect(callback!.data).toMatchObject({ cut: { pageCount: 9, parts: expect.arrayContaining([expect.objectContaining({ runId: children[0]!.id })]) } });
  });

  it("without a merge node each child runs to the end (its callback names its parent and part), and the parent completes once they have", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [{ id: "cut", split: { pagesPerPart: 4 } }, { id: "read", parse: {} }, notify()]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    expect((await until([parentId]))[0]!.status).toBe("completed");
    const children = await childrenOf(parentId);
    expect(children.map((child) => [child.status, child.part_label])).toEqual([
      ["completed", "pages 1-4"],
      ["completed", "pages 5-8"],
      ["completed", "page 9"],
    ]);
    expect(await deliveriesOf(parentId)).toEqual([]);
    const [last] = await deliveriesOf(children[2]!.id);
    expect(last).toMatchObject({
      status: "Completed",
      parentRunId: parentId,
      partIndex: 2,
      partLabel: "page 9",
      data: { read: { text: expect.stringContaining("Initech 3") } },
    });
  });

  it("a child's failure is the merge's input, not the parent's failure", async () => {
    const tenant = await insertTenant(bed.db);
    await addSigningSecret(bed.db, tenant);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { ranges: "1-3,4-6" } },
      { id: "read", parse: {} },
      { id: "check", transform: { expression: "$contains(read.text, 'Globex') ? $error('no Globex here') : 'ok'" } },
      { id: "gather", merge: {} },
      notify(),
    ]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    expect((await until([parentId]))[0]!.status).toBe("completed");
    const [callback] = await deliveriesOf(parentId);
    const parts = (callback!.data as { gather: { parts: Record<string, unknown>[] } }).gather.parts;
    expect(parts.map((part) => part.status)).toEqual(["Completed", "Failed"]);
    expect(parts[0]!.data).toMatchObject({ check: "ok" });
    expect(parts[1]).toMatchObject({ label: "pages 4-6", error: expect.stringContaining("no Globex here") });
  });

  it("the parent waits in AWAITING_CHILDREN, and cancelling it cancels its unfinished children", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { pagesPerPart: 3 } },
      { id: "look", review: {} },
      { id: "gather", merge: {} },
    ]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    await until([parentId], ["awaiting_children"]);
    const children = await childrenOf(parentId);
    await until(
      children.map((child) => child.id),
      ["review"],
    );
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const { run } = await client.getRun({ organizationId: tenant.organizationId, runId: parentId });
    expect(run!.status).toBe(RunStatus.AWAITING_CHILDREN);
    const listed = await client.listRuns({ organizationId: tenant.organizationId, parentRunId: parentId });
    expect(listed.runs.map((child) => [child.partIndex, child.partLabel, child.parentRunId, child.status])).toEqual(
      [2, 1, 0].map((index) => [index, `pages ${index * 3 + 1}-${index * 3 + 3}`, parentId, RunStatus.REVIEW]),
    );
    await client.cancelRun({ organizationId: tenant.organizationId, runId: parentId });
    expect((await childrenOf(parentId)).map((child) => child.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect((await until([parentId]))[0]!.status).toBe("cancelled");
  });

  it("RerunRun refuses a run that has not ended (awaiting its parts, in review) and a split's part; the parent, once ended, is rerun", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { pagesPerPart: 3 } },
      { id: "look", review: {} },
      { id: "gather", merge: {} },
    ]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    await until([parentId], ["awaiting_children"]);
    const children = await childrenOf(parentId);
    await until(
      children.map((child) => child.id),
      ["review"],
    );
    const client = inMemoryClients(testDeps(bed.db)).runs;
    const { organizationId } = tenant;
    const refusal = async (runId: string) => {
      const error = await connectErrorOf(client.rerunRun({ organizationId, runId }));
      return [Code[error.code], errorInfoOf(error)?.reason, errorInfoOf(error)?.metadata];
    };
    // A second live run of the same document: refused until the run has ended.
    expect(await refusal(parentId)).toEqual(["FailedPrecondition", "run_not_finished", { status: "awaiting_children" }]);
    expect(await refusal(children[0]!.id)).toEqual(["FailedPrecondition", "run_not_finished", { status: "review" }]);
    await client.cancelRun({ organizationId, runId: parentId });
    // A part, ended: its rerun would split the part again and send the parent's receiver a second merged callback.
    expect(await refusal(children[1]!.id)).toEqual(["FailedPrecondition", "run_is_part", { parent_run_id: parentId }]);
    const { run } = await client.rerunRun({ organizationId, runId: parentId });
    expect([run!.status, run!.rerunOfRunId]).toEqual([RunStatus.QUEUED, parentId]);
  });

  it("a multi-page TIFF is split into child runs of TIFF parts, each stored as a file of its own", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { pagesPerPart: 2 } },
      { id: "gather", merge: {} },
    ]);
    const tiff = await textTiff([["one"], ["two"], ["three"]]);
    const [parentId] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "scans.tif", "tiff", tiff));
    start();
    const [parent] = await until([parentId!]);
    expect(parent!.status).toBe("completed");
    const children = await childrenOf(parentId!);
    expect(children.map((child) => [child.status, child.part_label])).toEqual([
      ["completed", "pages 1-2"],
      ["completed", "page 3"],
    ]);
    const files = await bed.db
      .selectFrom("files")
      .select(["name", "format", "content_type"])
      .where(
        "id",
        "in",
        children.map((child) => child.file_id),
      )
      .orderBy("name")
      .execute();
    expect(files).toEqual([
      { name: "scans-part-1.tiff", format: "tiff", content_type: "image/tiff" },
      { name: "scans-part-2.tiff", format: "tiff", content_type: "image/tiff" },
    ]);
    const merged = (await stepsOf(bed.db, parentId!)).find((step) => step.node_id === "gather")!.output as { parts: { data: Record<string, unknown> }[] };
    expect(merged.parts.map((part) => part.data.cut)).toMatchObject([
      { index: 0, firstPage: 1, lastPage: 2 },
      { index: 1, firstPage: 3, lastPage: 3 },
    ]);
  });

  it("a document that is not a PDF, or one past SPLIT_MAX_PARTS, fails the split step with its code and makes no child", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { pagesPerPart: 1 } },
      { id: "read", parse: {} },
    ]);
    const [textRun] = await queueRuns(bed.db, tenant, pipeId, await addFile(bed.db, bed.store, tenant, "a.txt", "txt", Buffer.from("text")));
    const longRun = await submitPdf(tenant, pipeId, BUNDLE);
    start();
    const ended = new Map((await until([textRun!, longRun])).map((run) => [run.id, run]));
    expect(ended.get(textRun!)).toMatchObject({
      status: "failed",
      error: "step cut (split) failed: format_unsupported: the split node splits PDF and TIFF documents; this document is txt",
    });
    expect(ended.get(longRun)).toMatchObject({
      status: "failed",
      error: "step cut (split) failed: split_too_many_parts: the document would make more than 5 parts (SPLIT_MAX_PARTS)",
    });
    expect([...(await childrenOf(textRun!)), ...(await childrenOf(longRun))]).toEqual([]);
  });

  it("a split whose parts would take its organization past MAX_QUEUED_RUNS_PER_ORGANIZATION fails with too_many_queued_runs and makes no child", async () => {
    const tenant = await insertTenant(bed.db);
    const pipeId = await createPipe(bed.db, tenant, [
      { id: "cut", split: { atText: "separator" } },
      { id: "read", parse: {} },
    ]);
    const parentId = await submitPdf(tenant, pipeId, BUNDLE);
    // The running parent and its 3 parts make 4.
    start({ MAX_QUEUED_RUNS_PER_ORGANIZATION: "3" });
    const [parent] = await until([parentId]);
    expect(parent).toMatchObject({
      status: "failed",
      error:
        "step cut (split) failed: too_many_queued_runs: its 3 parts would take the organization past 3 runs queued or running (MAX_QUEUED_RUNS_PER_ORGANIZATION)",
    });
    expect(await childrenOf(parentId)).toEqual([]);
  });
});
