import type { NodeExecutor } from "../node-executor.ts";
import { conditionHolds } from "../../sandbox/expressions.ts";
import { nodeContext } from "../run-document.ts";

/** The route taken: the index of the first route whose condition holds, or "otherwise"; and the nodes it runs. */
export interface RouteOutput {
  route: number | "otherwise";
  to: string[];
}

export const executeRoute: NodeExecutor<"route", RouteOutput> = async (node, data, step) => {
  const { routes, otherwise } = node.kind.value;
  const caller = nodeContext(step);
  for (const [index, route] of routes.entries()) {
    if (await conditionHolds(route.when, `routes[${index}].when`, data, caller)) return { route: index, to: route.to };
  }
  return { route: "otherwise", to: otherwise };
};
