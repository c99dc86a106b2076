import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";

/** The email node. */
export const emailNode = {
  name: "email",
  nodeType: NodeType.EMAIL,
  form: { label: "Email", summary: "Sends the run's result by email." },
} as const satisfies NodeDefinition;
