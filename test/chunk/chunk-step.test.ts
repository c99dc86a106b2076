import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChunkNodeSchema, ChunkStrategy, NodeSchema, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { chunkOptions, chunkStep } from "../../src/documents/chunk/chunk-step.ts";
import { PipelineError, validatePipeline } from "../../src/runs/pipes/validate-pipeline.ts";
import { initialRunData } from "../../src/runs/nodes/run-data.ts";
import { addOutput } from "../../src/runs/engine/node-workers.ts";
import { latestParseOutput } from "../../src/runs/nodes/output-placement.ts";

const limits = { maxSizeMbLimit: 100, allowPrivateCallbacks: false };

function chunkPipeline(settings: Record<string, unknown>) {
  return create(PipelineSchema, {
    nodes: [
      { kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 10 } } },
      { kind: { case: "parse", value: {} } },
      { kind: { case: "chunk", value: settings } },
    ],
  });
}

/** The field of the invalid_pipeline error validating `settings` gives, or undefined when they are valid. */
function refusedField(settings: Record<string, unknown>): string | undefined {
  try {
    validatePipeline(chunkPipeline(settings), limits);
    return undefined;
  } catch (error) {
    if (!(error instanceof PipelineError)) throw error;
    expect(error.reason).toBe("invalid_pipeline");
    return error.field;
  }
}

describe("the chunk node", () => {
  it("defaults to by title with 1500 characters, and assigns the id chunk-1", () => {
    expect(chunkOptions(create(ChunkNodeSchema, {}))).toEqual({ strategy: "by_title", maxCharacters: 1500, overlapCharacters: 0 });
    expect(chunkOptions(create(ChunkNodeSchema, { strategy: ChunkStrategy.BY_SIZE, maxCharacters: 200, overlapCharacters: 20 }))).toEqual({
      strategy: "by_size",
      maxCharacters: 200,
      overlapCharacters: 20,
    });
    expect(validatePipeline(chunkPipeline({}), limits).nodes[2]!.id).toBe("chunk-1");
  });

  it("refuses an unknown strategy, a limit out of range and an overlap past half the limit", () => {
    expect(refusedField({ strategy: 7 })).toBe("pipeline.nodes[2].chunk.strategy");
    expect(refusedField({ maxCharacters: -1 })).toBe("pipeline.nodes[2].chunk.max_characters");
    expect(refusedField({ maxCharacters: 100_001 })).toBe("pipeline.nodes[2].chunk.max_characters");
    expect(refusedField({ maxCharacters: 100, overlapCharacters: 51 })).toBe("pipeline.nodes[2].chunk.overlap_characters");
    expect(refusedField({ overlapCharacters: -1 })).toBe("pipeline.nodes[2].chunk.overlap_characters");
    expect(refusedField({ maxCharacters: 100, overlapCharacters: 50 })).toBeUndefined();
  });

  it("chunks the elements of the latest parse before it, and fails without one", () => {
    const data = initialRunData({ name: "a.pdf", format: "pdf", size: 1, sha256: "0".repeat(64) });
    expect(() => chunkStep(create(ChunkNodeSchema, {}), latestParseOutput(data, new Set(["parse-1", "parse-2"])))).toThrow(
      "a chunk node needs a parse node before it that returned elements",
    );
    const parse = (id: string) => create(NodeSchema, { id, kind: { case: "parse", value: {} } });
    addOutput(data, parse("parse-1"), { elements: [{ type: "Title", text: "Old", level: 1 }] });
    addOutput(data, parse("parse-2"), {
      elements: [
        { type: "Title", text: "New", level: 1, page: 1 },
        { type: "NarrativeText", text: "Body.", page: 2 },
      ],
    });
    // An output with elements that is not a parse's (a transform's) is not cut.
    addOutput(data, create(NodeSchema, { id: "shape", kind: { case: "transform", value: {} } }), { elements: [{ type: "Title", text: "Not a parse" }] });
    expect(chunkStep(create(ChunkNodeSchema, {}), latestParseOutput(data, new Set(["parse-1", "parse-2", "shape"])))).toEqual({
      chunks: [{ text: "New\n\nBody.", pages: [1, 2], elementCount: 2 }],
    });
  });
});

describe("the chunk node's parse", () => {
  it("chunks the latest parse's elements when a parse node's id is a number (JavaScript lists integer keys first)", () => {
    const data = initialRunData({ name: "a.pdf", format: "pdf", size: 1, sha256: "0".repeat(64) });
    // Node ids may be digits (NODE_ID allows "2"); the second parse runs after "read".
    addOutput(data, create(NodeSchema, { id: "read", kind: { case: "parse", value: {} } }), {
      elements: [{ type: "NarrativeText", text: "first parse", page: 1 }],
    });
    addOutput(data, create(NodeSchema, { id: "2", kind: { case: "parse", value: {} } }), {
      elements: [{ type: "NarrativeText", text: "latest parse", page: 1 }],
    });
    expect(chunkStep(create(ChunkNodeSchema, {}), latestParseOutput(data, new Set(["read", "2"]))).chunks.map((chunk) => chunk.text)).toEqual(["latest parse"]);
  });
});
