import type { NodeExecutor } from "../../worker/node-executor.ts";
import { conditionHolds } from "../../sandbox/expressions.ts";

/** The route taken: the index of the first route whose condition holds, or "otherwise"; and the nodes it runs. */
export interface RouteOutput {
  route: number | "otherwise";
  to: string[];
}

export const executeRoute: NodeExecutor<"route", RouteOutput> = async (node, data) => {
  const { routes, otherwise } = node.kind.value;
  for (const [index, route] of routes.entries()) {
    if (await conditionHolds(route.when, `routes[${index}].when`, data)) return { route: index, to: route.to };
  }
  return { route: "otherwise", to: otherwise };
};
