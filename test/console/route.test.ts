import { describe, expect, it } from "vitest";
import { parseRoute, type Route, routeHash } from "../../console/src/route.ts";
import { RunStatus } from "../../gen/docpipe/v1/run_pb.js";

const ORG = "01a2016e-0000-7000-8000-000000000001";
const ID = "01a2016e-0000-7000-8000-000000000002";

describe("console addresses", () => {
  it.each<[string, Route]>([
    ["", { page: "start" }],
    ["#/", { page: "start" }],
    ["#/nowhere", { page: "start" }],
    [`#/orgs/${ORG}`, { page: "keys", org: ORG }],
    [`#/orgs/${ORG}/keys`, { page: "keys", org: ORG }],
    [`#/orgs/${ORG}/pipes`, { page: "pipes", org: ORG }],
    [`#/orgs/${ORG}/pipes/new`, { page: "pipe", org: ORG, pipeId: "new" }],
    [`#/orgs/${ORG}/pipes/${ID}`, { page: "pipe", org: ORG, pipeId: ID }],
    [`#/orgs/${ORG}/runs`, { page: "runs", org: ORG, pipeId: "", status: RunStatus.UNSPECIFIED }],
    [`#/orgs/${ORG}/runs?pipe=${ID}&status=3`, { page: "runs", org: ORG, pipeId: ID, status: RunStatus.COMPLETED }],
    [`#/orgs/${ORG}/runs/${ID}`, { page: "run", org: ORG, runId: ID }],
    [`#/orgs/${ORG}/workspaces`, { page: "workspaces", org: ORG }],
    [`#/orgs/${ORG}/signing-secret`, { page: "signing-secret", org: ORG }],
    [`#/orgs/${ORG}/unknown`, { page: "start" }],
    [`#/orgs/${ORG}/keys/${ID}`, { page: "start" }],
  ])("%s", (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it("an unknown run status in the address means any status", () => {
    expect(parseRoute(`#/orgs/${ORG}/runs?status=99`)).toMatchObject({ status: RunStatus.UNSPECIFIED });
    expect(parseRoute(`#/orgs/${ORG}/runs?status=abc`)).toMatchObject({ status: RunStatus.UNSPECIFIED });
  });

  it.each<Route>([
    { page: "start" },
    { page: "keys", org: ORG },
    { page: "pipe", org: ORG, pipeId: "new" },
    { page: "runs", org: ORG, pipeId: "", status: RunStatus.UNSPECIFIED },
    { page: "runs", org: ORG, pipeId: ID, status: RunStatus.FAILED },
    { page: "run", org: ORG, runId: ID },
    { page: "signing-secret", org: ORG },
  ])("routeHash and parseRoute agree: %o", (route) => {
    expect(parseRoute(routeHash(route))).toEqual(route);
  });

  it("unfiltered runs have a clean address", () => {
    expect(routeHash({ page: "runs", org: ORG, pipeId: "", status: RunStatus.UNSPECIFIED })).toBe(`#/orgs/${ORG}/runs`);
  });
});
