import type { NodeWorker } from "../node-executor.ts";
import { executeRoute, type RouteOutput } from "./route.ts";

/** A route passes on to the targets of the route it took only. */
export const routeWorker = {
  execute: executeRoute,
  passesOn: (output) => output.to,
} satisfies NodeWorker<"route", RouteOutput>;
