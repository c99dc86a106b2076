import { Graph, layout } from "@dagrejs/dagre";
import type { GraphEdge, GraphNode } from "./pipeline-graph.ts";

/** A node box on the canvas, in pixels. */
const NODE_SIZE = { width: 176, height: 56 };

/**
 * Where each node is drawn: dagre's layered layout, top to bottom in the direction runs flow (the
 * split's "gathers" edge is drawn but not laid out, so that it does not pull the merge forward).
 * Positions are the boxes' top-left corners.
 */
export function layoutGraph(nodes: GraphNode[], edges: GraphEdge[]): Map<string, { x: number; y: number }> {
  const graph = new Graph();
  graph.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 72, marginx: 16, marginy: 16 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { ...NODE_SIZE });
  for (const edge of edges) if (edge.kind !== "gathers" && graph.hasNode(edge.source) && graph.hasNode(edge.target)) graph.setEdge(edge.source, edge.target);
  layout(graph);
  const positions = new Map<string, { x: number; y: number }>();
  for (const node of nodes) {
    const placed = graph.node(node.id);
    positions.set(node.id, { x: placed.x - NODE_SIZE.width / 2, y: placed.y - NODE_SIZE.height / 2 });
  }
  return positions;
}
