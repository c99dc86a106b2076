import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkRouteSettings } from "./settings.ts";

/** The route node. */
export const routeNode = {
  name: "route",
  nodeType: NodeType.ROUTE,
  instant: true,
  form: { label: "Route", summary: "Sends the run on to the targets of the first route whose condition holds." },
  check: checkRouteSettings,
} as const satisfies NodeDefinition<"route">;
