import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { Edge } from "../nodes/definition.ts";
import { definitionOfNode } from "../nodes/registry.ts";

/** Every node id a node may pass on to, with the field naming it; a node's `next`, or the targets its settings name (a route's). */
export function edgesOf(node: Node, index: number, nodes: readonly Node[]): Edge[] {
  const edges = definitionOfNode(node)?.edges;
  if (edges !== undefined) return edges(node.kind.value!);
  if (node.endBranch) return [];
  if (node.next.length > 0) return node.next.map((target, t) => ({ field: `next[${t}]`, target }));
  // Empty `next` means the node listed after it, so a pipeline saved as a list keeps its meaning.
  const following = nodes[index + 1];
  return following === undefined ? [] : [{ field: "", target: following.id }];
}

/** A pipeline as indices: what the engine walks and validation checks. */
export interface PipelineGraph {
  /** The positions each node may pass on to, without repeats, in the order named. */
  successors: number[][];
  /** How many nodes may pass on to each node. */
  predecessorCounts: number[];
  /** The position of each node id. */
  positions: Map<string, number>;
}

/** The graph of a pipeline whose node ids are assigned; an edge to an unknown id is left out (validation names it). */
export function pipelineGraph(pipeline: { readonly nodes: readonly Node[] }): PipelineGraph {
  const { nodes } = pipeline;
  const positions = new Map(nodes.map((node, index) => [node.id, index]));
  const predecessorCounts = nodes.map(() => 0);
  const successors = nodes.map((node, index) => {
    const targets = new Set<number>();
    for (const edge of edgesOf(node, index, nodes)) {
      const position = positions.get(edge.target);
      if (position !== undefined) targets.add(position);
    }
    for (const target of targets) predecessorCounts[target]!++;
    return [...targets];
  });
  return { successors, predecessorCounts, positions };
}

/** The position of a node on a cycle, if there is one (iterative depth-first search, so a long chain cannot overflow the stack). */
export function findCycle(graph: PipelineGraph): number | undefined {
  const state = graph.successors.map(() => 0); // 0 unvisited, 1 on the path, 2 done
  for (let root = 0; root < state.length; root++) {
    if (state[root] !== 0) continue;
    const stack: [number, number][] = [[root, 0]];
    state[root] = 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const [node, next] = top;
      const target = graph.successors[node]![next];
      if (target === undefined) {
        state[node] = 2;
        stack.pop();
        continue;
      }
      top[1]++;
      if (state[target] === 1) return target;
      if (state[target] === 0) {
        state[target] = 1;
        stack.push([target, 0]);
      }
    }
  }
  return undefined;
}

/**
 * Whether each node can be reached from the first one (or from `starts`), going on only from nodes
 * that `passes` lets through (a node it stops is reached, not passed).
 */
export function reachable(graph: PipelineGraph, starts: readonly number[] = [0], passes: (position: number) => boolean = () => true): boolean[] {
  const seen = graph.successors.map(() => false);
  if (seen.length === 0) return seen;
  const stack = [...starts];
  for (const start of starts) seen[start] = true;
  while (stack.length > 0) {
    for (const target of graph.successors[stack.pop()!]!) {
      if (seen[target]) continue;
      seen[target] = true;
      if (passes(target)) stack.push(target);
    }
  }
  return seen;
}

/** The positions of the nodes that `position` can be reached from (its ancestors), itself excluded. */
export function ancestorsOf(graph: PipelineGraph, position: number): Set<number> {
  const predecessors = graph.successors.map((): number[] => []);
  graph.successors.forEach((targets, from) => {
    for (const target of targets) predecessors[target]!.push(from);
  });
  const found = new Set<number>();
  const stack = [position];
  while (stack.length > 0) {
    for (const from of predecessors[stack.pop()!]!) {
      if (found.has(from)) continue;
      found.add(from);
      stack.push(from);
    }
  }
  found.delete(position);
  return found;
}
