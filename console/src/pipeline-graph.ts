import { clone, create } from "@bufbuild/protobuf";
import { type Node, NodeSchema, type Pipeline, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/** A node kind: the case of the Node message's `kind` oneof ("httpTrigger", "route", …). */
export type NodeKind = NonNullable<Node["kind"]["case"]>;

/**
 * How one node passes a run to another: `next` (listed, or the node listed after it when next is
 * empty), a route's `to` (route: its index), a route's `otherwise`, or `gathers` (a split's child
 * runs gathered by the merge: drawn, not edited).
 */
type EdgeKind = "next" | "listed-after" | "route" | "otherwise" | "gathers";

export interface GraphEdge {
  /** Unique in the graph: what the canvas keys and deletes by. */
  id: string;
  source: string;
  target: string;
  kind: EdgeKind;
  /** The route's index in its node's routes (kind "route"). */
  route?: number;
  /** What the edge is labelled with on the canvas: the route's condition, "otherwise". */
  label?: string;
}

export interface GraphNode {
  id: string;
  kind: NodeKind | undefined;
}

/** The graph a pipeline's nodes make, as the worker follows it (docs/pipelines.md). */
export function graphOf(pipeline: Pipeline): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const nodes = pipeline.nodes.map((node) => ({ id: node.id, kind: node.kind.case }));
  const edges: GraphEdge[] = [];
  pipeline.nodes.forEach((node, index) => {
    const kind = node.kind;
    if (kind.case === "route") {
      kind.value.routes.forEach((route, position) => {
        for (const target of route.to) {
          edges.push({ id: `${node.id}>route${position}>${target}`, source: node.id, target, kind: "route", route: position, label: route.when });
        }
      });
      for (const target of kind.value.otherwise)
        edges.push({ id: `${node.id}>otherwise>${target}`, source: node.id, target, kind: "otherwise", label: "otherwise" });
      return;
    }
    if (node.next.length > 0) {
      for (const target of node.next) edges.push({ id: `${node.id}>next>${target}`, source: node.id, target, kind: "next" });
    } else if (!node.endBranch && index + 1 < pipeline.nodes.length) {
      const target = pipeline.nodes[index + 1]!.id;
      edges.push({ id: `${node.id}>next>${target}`, source: node.id, target, kind: "listed-after" });
    }
  });
  const split = pipeline.nodes.find((node) => node.kind.case === "split");
  const merge = pipeline.nodes.find((node) => node.kind.case === "merge");
  if (split && merge) edges.push({ id: `${split.id}>gathers>${merge.id}`, source: split.id, target: merge.id, kind: "gathers", label: "child runs" });
  return { nodes, edges };
}

/** An id not yet in the pipeline: the kind's name in the API's JSON ("http_request"), then -2, -3, … */
function freshId(pipeline: Pipeline, kind: NodeKind): string {
  const base = kind.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  const taken = new Set(pipeline.nodes.map((node) => node.id));
  if (!taken.has(base)) return base;
  for (let count = 2; ; count++) if (!taken.has(`${base}-${count}`)) return `${base}-${count}`;
}

/**
 * A node of `kind` with its settings' defaults, added last and unconnected: the node listed before
 * it, which had nothing after it, gets end_branch so that it does not pass on to the new node.
 */
export function addNode(pipeline: Pipeline, kind: NodeKind): { pipeline: Pipeline; id: string } {
  const next = clone(PipelineSchema, pipeline);
  const id = freshId(pipeline, kind);
  const last = next.nodes.at(-1);
  if (last && last.kind.case !== "route" && last.next.length === 0) last.endBranch = true;
  const field = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")!.fields.find((candidate) => candidate.localName === kind)!;
  if (field.fieldKind !== "message") throw new Error(`node kind ${kind} has no settings message`);
  next.nodes.push(create(NodeSchema, { id, kind: { case: kind, value: create(field.message) } as Node["kind"] }));
  return { pipeline: next, id };
}

/** A node's `next` written so: a next that is just the node listed after it is left empty (the same meaning). */
function tidyNext(pipeline: Pipeline, index: number): void {
  const node = pipeline.nodes[index]!;
  const after = pipeline.nodes[index + 1]?.id;
  if (node.next.length === 1 && node.next[0] === after) node.next = [];
  else if (node.next.length > 0) node.endBranch = false;
}

/** The ids `source` passes on to by next, with "the node listed after it" written out. */
function explicitNext(pipeline: Pipeline, index: number): string[] {
  const node = pipeline.nodes[index]!;
  if (node.next.length > 0 || node.endBranch) return [...node.next];
  const after = pipeline.nodes[index + 1]?.id;
  return after === undefined ? [] : [after];
}

/**
 * `source` passes on to `target` too. A route node takes it among its `otherwise` ids (its routes'
 * targets are chosen in its form); any other node in its `next`.
 */
export function connect(pipeline: Pipeline, source: string, target: string): Pipeline {
  const next = clone(PipelineSchema, pipeline);
  const index = next.nodes.findIndex((node) => node.id === source);
  const node = next.nodes[index];
  if (node === undefined || source === target || !next.nodes.some((candidate) => candidate.id === target)) return pipeline;
  if (node.kind.case === "route") {
    if (!node.kind.value.otherwise.includes(target)) node.kind.value.otherwise.push(target);
    return next;
  }
  const targets = explicitNext(next, index);
  if (targets.includes(target)) return pipeline;
  node.next = [...targets, target];
  node.endBranch = false;
  tidyNext(next, index);
  return next;
}

/** The edge removed; a node left with nothing after it ends its branch there. */
export function disconnect(pipeline: Pipeline, edge: GraphEdge): Pipeline {
  const next = clone(PipelineSchema, pipeline);
  const index = next.nodes.findIndex((node) => node.id === edge.source);
  const node = next.nodes[index];
  if (node === undefined || edge.kind === "gathers") return pipeline;
  const kind = node.kind;
  if (kind.case === "route") {
    if (edge.kind === "otherwise") kind.value.otherwise = kind.value.otherwise.filter((id) => id !== edge.target);
    else if (edge.route !== undefined && kind.value.routes[edge.route]) {
      const route = kind.value.routes[edge.route]!;
      route.to = route.to.filter((id) => id !== edge.target);
    }
    return next;
  }
  const remaining = explicitNext(next, index).filter((id) => id !== edge.target);
  node.next = remaining;
  node.endBranch = remaining.length === 0;
  tidyNext(next, index);
  return next;
}

/** The node removed with every edge to it; the nodes that passed on only to it end their branch there. */
export function deleteNode(pipeline: Pipeline, id: string): Pipeline {
  let next = pipeline;
  for (const edge of graphOf(pipeline).edges) if (edge.target === id && edge.kind !== "gathers") next = disconnect(next, edge);
  next = clone(PipelineSchema, next);
  next.nodes = next.nodes.filter((node) => node.id !== id);
  return next;
}

/** Why `id` cannot be a node's new id, or undefined when it can. */
export function renameProblem(pipeline: Pipeline, from: string, to: string): string | undefined {
  if (to.trim() === "") return "An id cannot be empty.";
  if (to !== from && pipeline.nodes.some((node) => node.id === to)) return `Another node has the id "${to}".`;
  return undefined;
}

/** The node's id changed, and every next, route target and otherwise that named it. */
export function renameNode(pipeline: Pipeline, from: string, to: string): Pipeline {
  if (from === to || renameProblem(pipeline, from, to) !== undefined) return pipeline;
  const next = clone(PipelineSchema, pipeline);
  const rename = (ids: string[]) => ids.map((id) => (id === from ? to : id));
  for (const node of next.nodes) {
    if (node.id === from) node.id = to;
    node.next = rename(node.next);
    if (node.kind.case === "route") {
      node.kind.value.otherwise = rename(node.kind.value.otherwise);
      for (const route of node.kind.value.routes) route.to = rename(route.to);
    }
  }
  return next;
}

/** The node index an invalid_pipeline field path names ("pipeline.nodes[3].route.routes[0].to[1]" -> 3). */
export function refusedNode(field: string | undefined): number | undefined {
  const match = field === undefined ? null : /^pipeline\.nodes\[(\d+)\]/.exec(field);
  return match === null ? undefined : Number(match[1]);
}
