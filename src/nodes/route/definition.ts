import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { routeForm } from "./form.ts";
import { checkRouteSettings } from "./settings.ts";

/** The route node. */
export const routeNode = {
  name: "route",
  nodeType: NodeType.ROUTE,
  instant: true,
  form: routeForm,
  check: checkRouteSettings,
} as const satisfies NodeDefinition<"route">;
