import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type Pipeline, PipelineSchema, ReviewDecision } from "../../gen/docpipe/v1/pipe_pb.js";
import { MAX_EXPRESSION_LENGTH } from "../../src/runs/sandbox/expressions.ts";
import { PipelineError, requireRunnablePipeline, validatePipeline } from "../../src/runs/pipes/validate-pipeline.ts";
import { requireParsedDocument } from "../../src/runs/nodes/run-data.ts";

const limits = { maxSizeMbLimit: 100, allowPrivateCallbacks: false };

type NodeInit = NonNullable<MessageInitShape<typeof PipelineSchema>["nodes"]>[number];

const trigger = (next: string[] = []): NodeInit => ({ id: "in", next, kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 10 } } });
const parse = (id: string, next: string[] = []): NodeInit => ({ id, next, kind: { case: "parse", value: {} } });
const route = (id: string, routes: { when: string; to: string[] }[], otherwise: string[] = [], next: string[] = []): NodeInit => ({
  id,
  next,
  kind: { case: "route", value: { routes, otherwise } },
});
const review = (id: string, settings: Record<string, unknown> = {}): NodeInit => ({ id, kind: { case: "review", value: { ...settings } } });

const pipeline = (...nodes: NodeInit[]): Pipeline => create(PipelineSchema, { nodes });

function refusal(input: Pipeline): PipelineError {
  try {
    validatePipeline(input, limits);
  } catch (error) {
    if (error instanceof PipelineError) return error;
    throw error;
  }
  throw new Error("expected a PipelineError, nothing was thrown");
}

function expectInvalid(input: Pipeline, field: string, message?: RegExp): void {
  const error = refusal(input);
  expect(error.reason).toBe("invalid_pipeline");
  expect(error.field).toBe(field);
  if (message !== undefined) expect(error.message).toMatch(message);
}

describe("the graph a pipeline's next ids make", () => {
  it("a pipeline saved as a list keeps its meaning: empty next is the node listed after it", () => {
    expect(validatePipeline(pipeline(trigger(), parse("a"), parse("b")), limits).nodes.map((node) => node.next)).toEqual([[], [], []]);
  });

  it("accepts a route whose branches join again, and parallel branches from one node", () => {
    const routed = pipeline(
      trigger(),
      parse("read"),
      route("by-kind", [{ when: "read.text ~> $contains('Invoice')", to: ["invoices", "archive"] }], ["letters"]),
      parse("invoices", ["done"]),
      parse("letters", ["done"]),
      parse("archive", ["done"]),
      parse("done"),
    );
    expect(() => validatePipeline(routed, limits)).not.toThrow();
  });

  it("refuses a next id no node has, naming the field", () => {
    expectInvalid(pipeline(trigger(["nowhere"]), parse("a")), "pipeline.nodes[0].next[0]", /no node has the id "nowhere"/);
  });

  it("refuses a route target no node has, naming the route's field", () => {
    expectInvalid(pipeline(trigger(), route("r", [{ when: "true", to: ["a", "ghost"] }]), parse("a")), "pipeline.nodes[1].route.routes[0].to[1]");
    expectInvalid(pipeline(trigger(), route("r", [{ when: "true", to: ["a"] }], ["ghost"]), parse("a")), "pipeline.nodes[1].route.otherwise[0]");
  });

  it("refuses a cycle", () => {
    expectInvalid(pipeline(trigger(), parse("a", ["b"]), parse("b", ["a"])), "pipeline.nodes[1].next", /node "a" is on a cycle/);
  });

  it("refuses a node that passes on to itself", () => {
    expectInvalid(pipeline(trigger(), parse("a", ["a"])), "pipeline.nodes[1].next", /on a cycle/);
  });

  it("refuses an edge back to the trigger", () => {
    expectInvalid(pipeline(trigger(), parse("a", ["in"])), "pipeline.nodes[1].next[0]", /no node can pass on to it/);
  });

  it("refuses a node the trigger cannot reach", () => {
    expectInvalid(pipeline(trigger(["b"]), parse("a", ["b"]), parse("b")), "pipeline.nodes[1]", /node "a" cannot be reached from the trigger/);
  });

  it("refuses an id listed twice in one next", () => {
    expectInvalid(pipeline(trigger(["a", "a"]), parse("a")), "pipeline.nodes[0].next[1]", /listed twice/);
  });

  it("end_branch ends a branch in the middle of the list; it cannot come with next or on a route", () => {
    const ends = (node: NodeInit): NodeInit => ({ ...node, endBranch: true });
    const branches = pipeline(trigger(), route("r", [{ when: "true", to: ["a"] }], ["b"]), ends(parse("a")), parse("b"));
    expect(() => validatePipeline(branches, limits)).not.toThrow();
    expectInvalid(pipeline(trigger(), ends(parse("a", ["b"])), parse("b")), "pipeline.nodes[1].end_branch");
    expectInvalid(pipeline(trigger(), ends(route("r", [{ when: "true", to: ["a"] }])), parse("a")), "pipeline.nodes[1].end_branch");
  });

  it("refuses a route node with next of its own", () => {
    expectInvalid(pipeline(trigger(), route("r", [{ when: "true", to: ["a"] }], [], ["a"]), parse("a")), "pipeline.nodes[1].next");
  });

  it("refuses a route without routes, or a route without a condition", () => {
    expectInvalid(pipeline(trigger(), route("r", [], ["a"]), parse("a")), "pipeline.nodes[1].route.routes");
    expectInvalid(pipeline(trigger(), route("r", [{ when: " ", to: ["a"] }]), parse("a")), "pipeline.nodes[1].route.routes[0].when");
  });

  it("refuses a JSONata expression that does not compile, with its position", () => {
    expectInvalid(
      pipeline(trigger(), route("r", [{ when: "read.text = ", to: ["a"] }]), parse("a")),
      "pipeline.nodes[1].route.routes[0].when",
      /JSONata error at position \d+: /,
    );
    expectInvalid(pipeline(trigger(), review("check", { when: "$$$(" })), "pipeline.nodes[1].review.when", /JSONata error at position/);
  });

  it("refuses an expression past its length limit", () => {
    expectInvalid(
      pipeline(trigger(), route("r", [{ when: `"${"x".repeat(MAX_EXPRESSION_LENGTH)}"`, to: ["a"] }]), parse("a")),
      "pipeline.nodes[1].route.routes[0].when",
      /at most 4096 characters/,
    );
  });

  it("refuses more than 50 routes and more than 50 next ids", () => {
    const many = Array.from({ length: 51 }, () => ({ when: "true", to: ["a"] }));
    expectInvalid(pipeline(trigger(), route("r", many), parse("a")), "pipeline.nodes[1].route.routes", /at most 50 routes/);
    expectInvalid(pipeline(trigger(Array.from({ length: 51 }, (_, n) => `n${n}`)), parse("a")), "pipeline.nodes[0].next", /at most 50/);
  });

  it("refuses a review timeout out of range and an unknown timeout decision", () => {
    expectInvalid(pipeline(trigger(), review("check", { timeoutHours: -1 })), "pipeline.nodes[1].review.timeout_hours");
    expectInvalid(pipeline(trigger(), review("check", { timeoutDecision: 9 })), "pipeline.nodes[1].review.timeout_decision");
    expect(() => validatePipeline(pipeline(trigger(), review("check", { timeoutHours: 48, timeoutDecision: ReviewDecision.APPROVE })), limits)).not.toThrow();
  });

  it("activation validates the whole graph again", () => {
    let error: unknown;
    try {
      requireRunnablePipeline(pipeline(trigger(["ghost"]), parse("a")), limits);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PipelineError);
    expect(error).toMatchObject({ reason: "pipeline_not_runnable", field: "pipeline.nodes[0].next[0]" });
  });

  it("a 50-node chain validates without deep recursion", () => {
    const nodes = [trigger(), ...Array.from({ length: 49 }, (_, n) => parse(`p${n}`))];
    expect(validatePipeline(pipeline(...nodes), limits).nodes).toHaveLength(50);
  });
});

describe("split and merge nodes", () => {
  const split = (id: string, settings: Record<string, unknown>, next: string[] = []): NodeInit => ({ id, next, kind: { case: "split", value: settings } });
  const merge = (id: string, next: string[] = []): NodeInit => ({ id, next, kind: { case: "merge", value: {} } });

  it("accepts a split followed by the children's nodes and a merge", () => {
    for (const settings of [{ pagesPerPart: 2 }, { ranges: "1-2, 3-7,8" }, { atText: "Page 1 of" }]) {
      expect(() => validatePipeline(pipeline(trigger(), split("cut", settings), parse("read"), merge("gather")), limits)).not.toThrow();
    }
    expect(() => validatePipeline(pipeline(trigger(), split("cut", { pagesPerPart: 1 }), parse("read")), limits)).not.toThrow();
  });

  it.each([
    [{}, "pipeline.nodes[1].split", /set exactly one of pages_per_part, ranges and at_text/],
    [{ pagesPerPart: 2, atText: "x" }, "pipeline.nodes[1].split", /set exactly one/],
    [{ pagesPerPart: -1 }, "pipeline.nodes[1].split.pages_per_part", /must be from 1 to 100000/],
    [{ ranges: "1-2,x" }, "pipeline.nodes[1].split.ranges", /"x" is not a page or a range/],
    [{ ranges: "3-1" }, "pipeline.nodes[1].split.ranges", /must go from page 1 or later/],
    [{ atText: "   " }, "pipeline.nodes[1].split.at_text", /not only spaces/],
    [{ atText: "x".repeat(201) }, "pipeline.nodes[1].split.at_text", /1 to 200 characters/],
  ])("refuses split settings %j", (settings, field, message) => {
    expectInvalid(pipeline(trigger(), split("cut", settings), parse("read")), field, message);
  });

  it("refuses a chunk node with no parse node before it; takes one after a parse", () => {
    const chunk = (id: string, next: string[] = []): NodeInit => ({ id, next, kind: { case: "chunk", value: {} } });
    expectInvalid(pipeline(trigger(), chunk("pieces")), "pipeline.nodes[1].chunk", /must come after a parse node/);
    expectInvalid(pipeline(trigger(["pieces", "read"]), chunk("pieces"), parse("read")), "pipeline.nodes[1].chunk", /must come after a parse node/);
    expect(() => validatePipeline(pipeline(trigger(), parse("read"), chunk("pieces")), limits)).not.toThrow();
  });

  it("refuses an extract or classify node whose source is not a parse node before it on every way", () => {
    const extract = (id: string, source: string): NodeInit => ({
      id,
      kind: { case: "extract", value: { source, fields: [{ name: "total", labels: ["Total"] }] } },
    });
    const classify = (id: string, source: string, next: string[] = []): NodeInit => ({
      id,
      next,
      kind: { case: "classify", value: { source, classes: [{ name: "invoice", rules: [{ keywords: ["invoice"] }] }] } },
    });
    expectInvalid(pipeline(trigger(), parse("read"), extract("fields", "nope")), "pipeline.nodes[2].extract.source", /"nope" is not a parse node/);
    expectInvalid(
      pipeline(trigger(), parse("read"), classify("kind", "read"), extract("fields", "kind")),
      "pipeline.nodes[3].extract.source",
      /"kind" is not a parse node/,
    );
    // A parse on one branch only: runs taking the other reach the extract without it.
    expectInvalid(
      pipeline(trigger(), route("which", [{ when: "true", to: ["read"] }], ["fields"]), parse("read", ["fields"]), extract("fields", "read")),
      "pipeline.nodes[3].extract.source",
      /not on every way/,
    );
    expectInvalid(pipeline(trigger(), classify("kind", "read", ["read"]), parse("read")), "pipeline.nodes[1].classify.source", /not on every way/);
    expect(() => validatePipeline(pipeline(trigger(), parse("read"), classify("kind", "read"), extract("fields", "read")), limits)).not.toThrow();
    expect(() => validatePipeline(pipeline(trigger(), parse("read"), extract("fields", "")), limits)).not.toThrow();
  });

  it("refuses a chunk node whose only parse comes before a split: a child run starts after the split, without that parse", () => {
    const chunk = (id: string, next: string[] = []): NodeInit => ({ id, next, kind: { case: "chunk", value: {} } });
    // Each part's run puts only its split step in its run data (src/runs/engine/execute.ts: a child run
    // starts at its split node), so "pieces" finds no parse and every child run fails there.
    expectInvalid(
      pipeline(trigger(), parse("read"), split("cut", { pagesPerPart: 1 }), chunk("pieces")),
      "pipeline.nodes[3].chunk",
      /must come after a parse node/,
    );
    expect(() => validatePipeline(pipeline(trigger(), split("cut", { pagesPerPart: 1 }), parse("read"), chunk("pieces")), limits)).not.toThrow();
  });

  it("accepts an extract after the merge reading the parse before the split: the parent run, which runs the merge and what follows, has that parse", () => {
    // src/runs/engine/execute.ts: a child run stops before the merge; the parent passes by the children's
    // nodes, runs the merge once it has split, and goes on with its own run data, "whole" in it.
    const extract = (id: string, source: string): NodeInit => ({
      id,
      kind: { case: "extract", value: { source, fields: [{ name: "total", labels: ["Total"] }] } },
    });
    expect(() =>
      validatePipeline(
        pipeline(trigger(), parse("whole"), split("cut", { pagesPerPart: 1 }), parse("part"), merge("gather"), extract("fields", "whole")),
        limits,
      ),
    ).not.toThrow();
  });

  it("refuses an extract after the merge reading a parse only the child runs make: the parent run has no output of it (source_missing on every run)", () => {
    const extract = (id: string, source: string): NodeInit => ({
      id,
      kind: { case: "extract", value: { source, fields: [{ name: "total", labels: ["Total"] }] } },
    });
    expectInvalid(
      pipeline(trigger(), split("cut", { pagesPerPart: 1 }), parse("part"), merge("gather"), extract("fields", "part")),
      "pipeline.nodes[4].extract.source",
      /not on every way/,
    );
  });

  it("refuses a chunk node after the merge whose only parse is in the child runs: the parent run, which runs it, has no parse output", () => {
    const chunk = (id: string, next: string[] = []): NodeInit => ({ id, next, kind: { case: "chunk", value: {} } });
    // The parent passes by the children's nodes (src/runs/engine/execute.ts) and runs the merge and "pieces" itself.
    expectInvalid(
      pipeline(trigger(), split("cut", { pagesPerPart: 1 }), parse("part"), merge("gather"), chunk("pieces")),
      "pipeline.nodes[4].chunk",
      /must come after a parse node/,
    );
  });

  it("refuses an extract with an empty source (the run's first parse) in the child runs of a split whose only parse comes before it", () => {
    // As for a named source and for a chunk: a part's run data holds only its split step ({pageCount, parts}),
    // so "the run's first parse output" is none and every child run fails with source_missing.
    const extract = (id: string, source: string): NodeInit => ({
      id,
      kind: { case: "extract", value: { source, fields: [{ name: "total", labels: ["Total"] }] } },
    });
    expectInvalid(pipeline(trigger(), parse("read"), split("cut", { pagesPerPart: 1 }), extract("fields", "")), "pipeline.nodes[3].extract.source");
    // Nor does a run with no parse at all, while a transform or an HTTP request may give a parse-shaped output.
    expectInvalid(pipeline(trigger(), extract("fields", "")), "pipeline.nodes[1].extract.source");
    const shaped: NodeInit = { id: "shape", kind: { case: "transform", value: { expression: '{"text": "Total 3"}' } } };
    expect(() => validatePipeline(pipeline(trigger(), shaped, extract("fields", "")), limits)).not.toThrow();
    expect(() => validatePipeline(pipeline(trigger(), split("cut", { pagesPerPart: 1 }), parse("read"), extract("fields", "")), limits)).not.toThrow();
  });

  it("refuses an extract with an empty source whose only way is through an HTTP request: the request's output is {status, body}, never shaped like a parse", () => {
    const extract = (id: string): NodeInit => ({ id, kind: { case: "extract", value: { source: "", fields: [{ name: "total", labels: ["Total"] }] } } });
    const ask: NodeInit = { id: "ask", kind: { case: "httpRequest", value: { url: '"https://parser.example/parse"' } } };
    // Even an outside parser that answers {"text": ...} puts {status, body} in the run data (src/runs/nodes/http-request/worker.ts),
    // so "the run's first parse output" is none and every run fails at the extract.
    const runData = { ask: { status: 200, body: { text: "Total 3", pages: [{ page: 1, text: "Total 3" }] } } };
    expect(() => requireParsedDocument(runData, "")).toThrow(/source_missing|no parse output/);
    expectInvalid(pipeline(trigger(), ask, extract("fields")), "pipeline.nodes[2].extract.source");
  });

  it("refuses a second split, a second merge, and a merge that does not come after the split", () => {
    expectInvalid(pipeline(trigger(), split("a", { pagesPerPart: 1 }), split("b", { pagesPerPart: 1 })), "pipeline.nodes[2].split", /at most one split node/);
    expectInvalid(pipeline(trigger(), split("a", { pagesPerPart: 1 }), merge("m1"), merge("m2")), "pipeline.nodes[3].merge", /at most one merge node/);
    expectInvalid(pipeline(trigger(), merge("gather"), parse("read")), "pipeline.nodes[1].merge", /must come after the split node/);
    expectInvalid(
      pipeline(trigger(["gather", "cut"]), merge("gather", []), split("cut", { pagesPerPart: 1 })),
      "pipeline.nodes[1].merge",
      /must come after the split node/,
    );
  });
});
