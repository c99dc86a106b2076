import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";

/** The route node. */
export const routeNode = {
  name: "route",
  nodeType: NodeType.ROUTE,
  instant: true,
  form: { label: "Route", summary: "Sends the run on to the targets of the first route whose condition holds." },
} as const satisfies NodeDefinition;
