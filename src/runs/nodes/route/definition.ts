import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { routeForm } from "./form.ts";
import { checkRouteSettings } from "./settings.ts";

/** The route node. */
export const routeNode = {
  name: "route",
  nodeType: NodeType.ROUTE,
  instant: true,
  edges: (route) => [
    ...route.routes.flatMap((each, r) => each.to.map((target, t) => ({ field: `route.routes[${r}].to[${t}]`, target }))),
    ...route.otherwise.map((target, t) => ({ field: `route.otherwise[${t}]`, target })),
  ],
  passesOnThrough: "its routes and otherwise",
  form: routeForm,
  check: checkRouteSettings,
} as const satisfies NodeDefinition<"route">;
