import { create, fromJson, type JsonObject, toJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { layoutGraph } from "../../console/src/graph-layout.ts";
import { NODE_KINDS } from "../../console/src/node-kinds.ts";
import { emptyPipelineForm, pipelineFromJson, pipelineJson, toPipeline } from "../../console/src/pipeline-form.ts";
import { addNode, connect, deleteNode, disconnect, graphOf, refusedNode, renameNode, renameProblem } from "../../console/src/pipeline-graph.ts";
import { type Pipeline, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { INVOICES_EXAMPLE_DEFAULTS, invoicesExample } from "../../src/runs/pipes/invoices-example.ts";

const example = () => fromJson(PipelineSchema, invoicesExample(INVOICES_EXAMPLE_DEFAULTS));
const edgesOf = (pipeline: Pipeline) => graphOf(pipeline).edges.map((edge) => `${edge.source} ${edge.kind} ${edge.target}`);
const json = (pipeline: Pipeline) => toJson(PipelineSchema, pipeline) as { nodes: JsonObject[] };

/** The pipelines the test fixtures save: the invoices example, the editor's new pipe, a split and merge, routes with parallel branches. */
const FIXTURES: Record<string, JsonObject> = {
  "invoices example": invoicesExample(INVOICES_EXAMPLE_DEFAULTS),
  "a new pipe": toJson(PipelineSchema, toPipeline(emptyPipelineForm())) as JsonObject,
  "split and merge": {
    nodes: [
      { id: "in", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
      { id: "split", split: { pagesPerPart: 1 } },
      { id: "parse", parse: {} },
      { id: "merge", merge: {} },
      { id: "out", callback: { url: "https://hooks.example/x", headers: { "X-A": "1" }, retryCount: 0 } },
    ],
  },
  "parallel branches": {
    nodes: [
      { id: "in", emailTrigger: { allowedSenders: ["@acme.example"] }, next: ["a", "b"] },
      { id: "a", parse: { ocr: "OCR_MODE_ALWAYS", languages: ["deu"] }, endBranch: true },
      {
        id: "b",
        route: {
          routes: [
            { when: "$exists(a)", to: ["c"] },
            { when: "true", to: ["c", "d"] },
          ],
        },
      },
      { id: "c", transform: { expression: "$sum(a.total)" }, endBranch: true },
      { id: "d", review: {} },
    ],
  },
};

describe("the canvas's graph of a pipeline", () => {
  it("the invoices example: listed-after edges, the route's condition and otherwise, end_branch ends a branch", () => {
    const graph = graphOf(example());
    expect(graph.nodes.map((node) => `${node.id}:${node.kind}`)).toEqual([
      "email:emailTrigger",
      "parse:parse",
      "classify:classify",
      "route:route",
      "extract:extract",
      "validate:validate",
      "review:review",
      "accounts:callback",
      "archive:callback",
    ]);
    expect(edgesOf(example())).toEqual([
      "email listed-after parse",
      "parse listed-after classify",
      "classify listed-after route",
      "route route extract",
      "route otherwise archive",
      "extract listed-after validate",
      "validate listed-after review",
      "review listed-after accounts",
    ]);
    expect(graph.edges.find((edge) => edge.kind === "route")!.label).toBe("classify.class = 'invoice'");
  });

  it("next lists parallel branches; a split's child runs are gathered by its merge", () => {
    expect(edgesOf(fromJson(PipelineSchema, FIXTURES["parallel branches"]!))).toEqual(["in next a", "in next b", "b route c", "b route c", "b route d"]);
    expect(edgesOf(fromJson(PipelineSchema, FIXTURES["split and merge"]!))).toContain("split gathers merge");
  });

  it("the layout places every node once, top to bottom as runs flow", () => {
    const { nodes, edges } = graphOf(example());
    const positions = layoutGraph(nodes, edges);
    expect([...positions.keys()]).toEqual(nodes.map((node) => node.id));
    const y = (id: string) => positions.get(id)!.y;
    expect(y("email")).toBeLessThan(y("parse"));
    expect(y("route")).toBeLessThan(y("extract"));
    expect(y("route")).toBeLessThan(y("archive"));
    expect(y("review")).toBeLessThan(y("accounts"));
  });
});

describe("editing on the canvas", () => {
  it("a node from the palette is added last, unconnected, with its kind's defaults and a fresh id", () => {
    const start = toPipeline(emptyPipelineForm());
    const { pipeline, id } = addNode(start, "route");
    expect(id).toBe("route");
    expect(json(pipeline)).toEqual({
      nodes: [
        { id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
        { id: "parse", parse: {}, endBranch: true },
        { id: "route", route: {} },
      ],
    });
    expect(addNode(pipeline, "route").id).toBe("route-2");
    expect(addNode(pipeline, "httpRequest").id).toBe("http_request");
  });

  it("every kind of the descriptor can be added", () => {
    let pipeline = create(PipelineSchema);
    for (const kind of NODE_KINDS) pipeline = addNode(pipeline, kind).pipeline;
    expect(pipeline.nodes.map((node) => node.kind.case)).toEqual(NODE_KINDS);
    expect(NODE_KINDS).toHaveLength(16);
  });

  it("connecting to the node listed next clears end_branch (next stays empty); to another node writes next out", () => {
    const added = addNode(toPipeline(emptyPipelineForm()), "review").pipeline;
    const joined = connect(added, "parse", "review");
    expect(json(joined).nodes).toEqual([
      { id: "trigger", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
      { id: "parse", parse: {} },
      { id: "review", review: {} },
    ]);
    expect(json(connect(joined, "trigger", "review")).nodes).toContainEqual({
      id: "trigger",
      httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 },
      next: ["parse", "review"],
    });
    expect(connect(joined, "parse", "review")).toBe(joined);
    expect(connect(joined, "parse", "parse")).toBe(joined);
    expect(connect(joined, "parse", "ghost")).toBe(joined);
  });

  it("a route node takes a connection among its otherwise ids", () => {
    const routed = connect(example(), "route", "review");
    const route = routed.nodes[3]!.kind;
    expect(route.case === "route" && route.value.otherwise).toEqual(["archive", "review"]);
  });

  it("disconnecting: a listed-after edge ends the branch; a route's target and otherwise are removed", () => {
    const edges = graphOf(example()).edges;
    const cut = disconnect(example(), edges.find((edge) => edge.source === "validate")!);
    expect(json(cut).nodes).toContainEqual(expect.objectContaining({ id: "validate", endBranch: true }));
    expect(edgesOf(cut)).not.toContain("validate listed-after review");
    const noRoute = disconnect(example(), edges.find((edge) => edge.kind === "route")!);
    const noOtherwise = disconnect(example(), edges.find((edge) => edge.kind === "otherwise")!);
    expect(json(noRoute).nodes[3]).toEqual({ id: "route", route: { routes: [{ when: "classify.class = 'invoice'" }], otherwise: ["archive"] } });
    expect(json(noOtherwise).nodes[3]).toEqual({ id: "route", route: { routes: [{ when: "classify.class = 'invoice'", to: ["extract"] }] } });
  });

  it("disconnecting one of two next ids keeps the other (a next of just the node listed after it is left empty)", () => {
    const branches = fromJson(PipelineSchema, FIXTURES["parallel branches"]!);
    const [toA, toB] = graphOf(branches).edges;
    expect(json(disconnect(branches, toA!)).nodes[0]).toEqual({ id: "in", emailTrigger: { allowedSenders: ["@acme.example"] }, next: ["b"] });
    const onlyA = disconnect(branches, toB!);
    expect(json(onlyA).nodes[0]).toEqual({ id: "in", emailTrigger: { allowedSenders: ["@acme.example"] } });
    expect(edgesOf(onlyA)[0]).toBe("in listed-after a");
  });

  it("deleting a node removes the edges to it; the node before it ends its branch", () => {
    const without = deleteNode(example(), "validate");
    expect(without.nodes.map((node) => node.id)).not.toContain("validate");
    expect(edgesOf(without)).toContain("review listed-after accounts");
    expect(edgesOf(without)).not.toContain("extract listed-after review");
    const noArchive = deleteNode(example(), "archive");
    expect(json(noArchive).nodes[3]).toEqual({ id: "route", route: { routes: [{ when: "classify.class = 'invoice'", to: ["extract"] }] } });
  });

  it("renaming changes every id that named the node; an empty or taken id is refused", () => {
    const renamed = renameNode(example(), "archive", "store");
    expect(json(renamed).nodes[3]).toEqual({ id: "route", route: { routes: [{ when: "classify.class = 'invoice'", to: ["extract"] }], otherwise: ["store"] } });
    expect(renamed.nodes[8]!.id).toBe("store");
    const branches = renameNode(fromJson(PipelineSchema, FIXTURES["parallel branches"]!), "c", "sum");
    expect(edgesOf(branches)).toEqual(["in next a", "in next b", "b route sum", "b route sum", "b route d"]);
    expect(renameProblem(example(), "archive", " ")).toBe("An id cannot be empty.");
    expect(renameProblem(example(), "archive", "review")).toBe('Another node has the id "review".');
    expect(renameNode(example(), "archive", "review").nodes[8]!.id).toBe("archive");
  });

  it("an invalid_pipeline field names the node it is about", () => {
    expect(refusedNode("pipeline.nodes[3].route.routes[0].to[1]")).toBe(3);
    expect(refusedNode("pipeline.nodes[12]")).toBe(12);
    expect(refusedNode("name")).toBeUndefined();
    expect(refusedNode(undefined)).toBeUndefined();
  });
});

describe("the JSON view round-trips every fixture pipeline unchanged", () => {
  it.each(Object.keys(FIXTURES))("%s", (name) => {
    const fixture = FIXTURES[name]!;
    // The JSON the editor shows is the API's: the fixture's content, in field order.
    const text = pipelineJson(fromJson(PipelineSchema, fixture));
    expect(JSON.parse(text)).toEqual(fixture);
    // JSON view -> canvas -> JSON view: the canvas reads its graph and gives back the same text.
    const onCanvas = pipelineFromJson(text);
    graphOf(onCanvas);
    expect(pipelineJson(onCanvas)).toBe(text);
    const first = onCanvas.nodes[1]!.id;
    expect(pipelineJson(renameNode(renameNode(onCanvas, first, "renamed"), "renamed", first))).toBe(text);
  });
});
