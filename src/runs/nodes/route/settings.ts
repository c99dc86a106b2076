import type { RouteNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { checkCondition, checkNodeIds, settingsInvalid } from "../settings.ts";

const MAX_ROUTES = 50;

/** One to MAX_ROUTES routes, each with a condition that compiles. */
export function checkRouteSettings(route: RouteNode, path: string): void {
  if (route.routes.length === 0) throw settingsInvalid(`${path}.routes`, "a route node needs at least one route");
  if (route.routes.length > MAX_ROUTES) throw settingsInvalid(`${path}.routes`, `at most ${MAX_ROUTES} routes`);
  route.routes.forEach((each, index) => {
    if (each.when.trim() === "") throw settingsInvalid(`${path}.routes[${index}].when`, "a route needs a condition (JSONata)");
    checkCondition(each.when, `${path}.routes[${index}].when`);
    checkNodeIds(each.to, `${path}.routes[${index}].to`);
  });
  checkNodeIds(route.otherwise, `${path}.otherwise`);
}
