import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { pipelineDiff } from "../../console/src/pipeline-diff.ts";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";

const pipeline = (json: JsonObject) => fromJson(PipelineSchema, json);

describe("pipelineDiff", () => {
  it("finds nothing between a version and itself", () => {
    const example = pipeline(invoicesExample(INVOICES_EXAMPLE_DEFAULTS));
    expect(pipelineDiff(example, example)).toEqual({ added: [], removed: [], changed: [], pipeline: [] });
  });

  it("names the nodes added and removed, and each changed node's settings with their values before and after", () => {
    const before = pipeline({
      nodes: [
        { id: "in", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
        { id: "read", parse: {} },
        { id: "out", callback: { url: "https://hooks.example/a", retryCount: 1 } },
      ],
    });
    const after = pipeline({
      nodes: [
        { id: "in", httpTrigger: { acceptedFormats: ["pdf", "png"], maxSizeMb: 10 } },
        { id: "read", parse: {} },
        { id: "total", transform: { expression: "read.text" } },
        { id: "out2", callback: { url: "https://hooks.example/a" } },
      ],
    });
    expect(pipelineDiff(before, after)).toEqual({
      added: ["total", "out2"],
      removed: ["out"],
      changed: [{ id: "in", changes: [{ path: "httpTrigger.acceptedFormats[1]", after: "png" }] }],
      pipeline: [],
    });
  });

  it("shows a setting turned off or emptied as removed, and a first pipeline against none as every node added", () => {
    const before = pipeline({ nodes: [{ id: "out", callback: { url: "https://hooks.example/a", retryCount: 1 } }] });
    const after = pipeline({ nodes: [{ id: "out", callback: { url: "https://hooks.example/b" } }] });
    expect(pipelineDiff(before, after).changed).toEqual([
      {
        id: "out",
        changes: [
          { path: "callback.url", before: "https://hooks.example/a", after: "https://hooks.example/b" },
          { path: "callback.retryCount", before: 1 },
        ],
      },
    ]);
    expect(pipelineDiff(undefined, after).added).toEqual(["out"]);
  });
});
