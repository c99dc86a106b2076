import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";

/** Every page of the console; the organization is part of the address so that a page can be bookmarked. */
export type Route =
  | { page: "start" }
  | { page: "invitation"; token: string }
  | { page: "members"; org: string }
  | { page: "audit"; org: string }
  | { page: "keys"; org: string }
  | { page: "pipes"; org: string }
  | { page: "pipe"; org: string; pipeId: string | "new" }
  | { page: "runs"; org: string; pipeId: string; status: RunStatus }
  | { page: "run"; org: string; runId: string }
  /** The review queue (runId "") or one run in review. */
  | { page: "review"; org: string; runId: string }
  | { page: "workspaces"; org: string }
  | { page: "signing-secret"; org: string };

const SIMPLE_PAGES = ["keys", "pipes", "workspaces", "signing-secret", "members", "audit"] as const;

function runStatus(value: string | null): RunStatus {
  const number = Number(value ?? "");
  return Object.values(RunStatus).includes(number) ? (number as RunStatus) : RunStatus.UNSPECIFIED;
}

/** The route of a location hash such as `#/orgs/<id>/runs?pipe=<id>&status=3`; unknown hashes are the start page. */
export function parseRoute(hash: string): Route {
  const [path = "", queryString = ""] = hash.replace(/^#/, "").split("?");
  const query = new URLSearchParams(queryString);
  const parts = path
    .split("/")
    .filter((part) => part !== "")
    .map(decodeURIComponent);
  const [orgs, org, page, id] = parts;
  if (orgs === "invitation" && org !== undefined) return { page: "invitation", token: org };
  if (orgs !== "orgs" || org === undefined) return { page: "start" };
  if (page === undefined) return { page: "keys", org };
  if (page === "review") return { page: "review", org, runId: id ?? "" };
  if (id === undefined) {
    if (page === "runs") return { page: "runs", org, pipeId: query.get("pipe") ?? "", status: runStatus(query.get("status")) };
    const simple = SIMPLE_PAGES.find((name) => name === page);
    return simple === undefined ? { page: "start" } : { page: simple, org };
  }
  if (page === "pipes") return { page: "pipe", org, pipeId: id };
  if (page === "runs") return { page: "run", org, runId: id };
  return { page: "start" };
}

/** The location hash of a route; parseRoute(routeHash(route)) gives the route back. */
export function routeHash(route: Route): string {
  if (route.page === "start") return "#/";
  if (route.page === "invitation") return `#/invitation/${encodeURIComponent(route.token)}`;
  const base = `#/orgs/${encodeURIComponent(route.org)}`;
  switch (route.page) {
    case "pipe":
      return `${base}/pipes/${encodeURIComponent(route.pipeId)}`;
    case "run":
      return `${base}/runs/${encodeURIComponent(route.runId)}`;
    case "review":
      return `${base}/review${route.runId === "" ? "" : `/${encodeURIComponent(route.runId)}`}`;
    case "runs": {
      const query = new URLSearchParams();
      if (route.pipeId !== "") query.set("pipe", route.pipeId);
      if (route.status !== RunStatus.UNSPECIFIED) query.set("status", String(route.status));
      const search = query.toString();
      return `${base}/runs${search === "" ? "" : `?${search}`}`;
    }
    default:
      return `${base}/${route.page}`;
  }
}
