import { NodeSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import type { NodeKind } from "./pipeline-graph.ts";

/**
 * What the console says about a node kind beyond its descriptor: its name on the canvas and in the
 * palette. The node registry (src/nodes/<kind>/) can provide these later; a kind without hints is
 * shown by its field name.
 */
export interface KindHints {
  label: string;
  /** Starts a pipeline: offered first, and only one per pipeline makes sense. */
  trigger?: boolean;
}

export const KIND_HINTS: Partial<Record<NodeKind, KindHints>> = {
  httpTrigger: { label: "HTTP trigger", trigger: true },
  emailTrigger: { label: "Email trigger", trigger: true },
  parse: { label: "Parse" },
  classify: { label: "Classify" },
  route: { label: "Route" },
  extract: { label: "Extract" },
  validate: { label: "Validate" },
  transform: { label: "Transform" },
  review: { label: "Review" },
  httpRequest: { label: "HTTP request" },
  callback: { label: "Callback" },
  email: { label: "Email" },
  chunk: { label: "Chunk" },
  split: { label: "Split" },
  merge: { label: "Merge" },
};

/** Every node kind, from the Node message's `kind` oneof, in the order the proto declares them. */
export const NODE_KINDS: NodeKind[] = NodeSchema.oneofs.find((oneof) => oneof.name === "kind")!.fields.map((field) => field.localName as NodeKind);

export function kindLabel(kind: NodeKind | undefined): string {
  if (kind === undefined) return "No kind";
  return KIND_HINTS[kind]?.label ?? kind;
}
