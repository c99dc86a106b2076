import type { TransformNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { evaluateExpression } from "../../sandbox/expressions.ts";
import type { NodeContext, RunData } from "../run-data.ts";

/** The value of the node's JSONata expression over the run data; nothing is null. */
export async function runTransform(node: TransformNode, runData: RunData, context: NodeContext, path = "transform"): Promise<unknown> {
  return (await evaluateExpression(node.expression, `${path}.expression`, runData, context)) ?? null;
}
