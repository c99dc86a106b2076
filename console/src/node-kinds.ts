import { NodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { NODE_FORMS } from "../../src/runs/nodes/forms.ts";
import type { NodeKind } from "./pipeline-graph.ts";

/** Every node kind, from the Node message's `kind` oneof, in the order the proto declares them. */
export const NODE_KINDS: NodeKind[] = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")!.fields.map((field) => field.localName as NodeKind);

/** A kind's name on the canvas and in the palette: its label in the node registry (src/runs/nodes/<kind>/form.ts). */
export function kindLabel(kind: NodeKind | undefined): string {
  if (kind === undefined) return "No kind";
  return NODE_FORMS[kind]?.label ?? kind;
}
