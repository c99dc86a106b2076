import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { runDataOf } from "../../console/src/expressions/run-data.ts";
import { nodeStatus } from "../../console/src/node-status.ts";
import { RunSchema, RunStatus, StepStatus } from "../../gen/docpipe/v1/run_pb.js";

const run = (status: RunStatus) =>
  create(RunSchema, {
    status,
    file: { name: "a.pdf", format: "pdf", contentType: "application/pdf", size: 12n, sha256: "ab" },
    steps: [
      { nodeId: "parse", status: StepStatus.COMPLETED, output: { text: "old" } },
      { nodeId: "parse", status: StepStatus.COMPLETED, output: { text: "again" } },
      { nodeId: "total", status: StepStatus.COMPLETED, outputValue: { kind: { case: "numberValue", value: 42 } } },
      { nodeId: "check", status: StepStatus.WAITING },
      { nodeId: "send", status: StepStatus.FAILED, error: "refused" },
      { nodeId: "call", status: StepStatus.RUNNING },
    ],
  });

describe("a run on the canvas", () => {
  it("gives each node the status of its last step, and a node without one queued while the run goes on, skipped once it has ended", () => {
    const statuses = (status: RunStatus) => ["parse", "check", "send", "call", "archive"].map((id) => nodeStatus(run(status), id));
    expect(statuses(RunStatus.RUNNING)).toEqual(["succeeded", "waiting", "failed", "running", "queued"]);
    expect(statuses(RunStatus.REVIEW)).toEqual(["succeeded", "waiting", "failed", "running", "queued"]);
    expect(statuses(RunStatus.COMPLETED)).toEqual(["succeeded", "waiting", "failed", "running", "skipped"]);
  });

  it("reads the run's data as its nodes wrote it: the file, then each node's last output under its id, values that are not objects too", () => {
    expect(runDataOf(run(RunStatus.COMPLETED))).toEqual({
      file: { name: "a.pdf", format: "pdf", contentType: "application/pdf", size: 12, sha256: "ab" },
      parse: { text: "again" },
      total: 42,
    });
  });
});
