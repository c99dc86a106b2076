import type { TransformNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compileExpression } from "../../sandbox/expressions.ts";
import { requireText } from "../settings.ts";

/** The expression is set and compiles. */
export function checkTransformSettings(transform: TransformNode, path: string): void {
  requireText(transform.expression, `${path}.expression`, "an expression");
  compileExpression(transform.expression, `${path}.expression`);
}
