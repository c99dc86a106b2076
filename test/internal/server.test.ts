import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { internalInterceptors, internalTokenInterceptor } from "../../src/internal/interceptors.ts";
import { type InternalServer, startInternalServer } from "../../src/internal/server.ts";
import { createServices, serviceRoutes } from "../../src/services/routes.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";

let deps: ReturnType<typeof testDeps>;
beforeAll(async () => {
  deps = testDeps(await testDatabase());
});

describe("internal token interceptor (in memory)", () => {
  const withToken = (header?: string) =>
    createClient(WorkspaceService, createRouterTransport(serviceRoutes(createServices(deps), [internalTokenInterceptor("s3cret")]), {
      transport: { interceptors: header === undefined ? [] : [(next) => (request) => (request.header.set("authorization", header), next(request))] },
    }));

  it("refuses a call without Authorization: Unauthenticated internal_token_invalid", async () => {
    const error = await connectErrorOf(withToken().listOrganizations({}));
    expect(error.code).toBe(Code.Unauthenticated);
    expect(reasonOf(error)).toBe("internal_token_invalid");
  });

  it.each(["Bearer wrong", "s3cret", "Bearer s3cret2", "Basic s3cret"])("refuses %j", async (header) => {
    expect((await connectErrorOf(withToken(header).listOrganizations({}))).code).toBe(Code.Unauthenticated);
  });

  it("lets the right bearer token through", async () => {
    const { organization } = await withToken("Bearer s3cret").createOrganization({ name: "token test" });
    expect(organization!.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("internal server: Connect and gRPC over HTTP/1.1 and HTTP/2 on one port", () => {
  let server: InternalServer;
  beforeAll(async () => {
    server = await startInternalServer(serviceRoutes(createServices(deps), internalInterceptors(pino({ level: "silent" }), "s3cret")), "127.0.0.1", 0);
  });
  afterAll(() => server.close(1000));

  const transports = {
    "Connect over HTTP/1.1": () => createConnectTransport({ baseUrl: `http://127.0.0.1:${server.port}`, httpVersion: "1.1" }),
    "Connect over HTTP/2": () => createConnectTransport({ baseUrl: `http://127.0.0.1:${server.port}`, httpVersion: "2" }),
    "gRPC over HTTP/2": () => createGrpcTransport({ baseUrl: `http://127.0.0.1:${server.port}` }),
  };

  it.each(Object.keys(transports))("%s works with the token and is refused without", async (name) => {
    const client = createClient(WorkspaceService, transports[name as keyof typeof transports]());
    const headers = { authorization: "Bearer s3cret" };
    const { organization } = await client.createOrganization({ name }, { headers });
    const { organization: read } = await client.getOrganization({ organizationId: organization!.id }, { headers });
    expect(read!.name).toBe(name);
    expect((await connectErrorOf(client.getOrganization({ organizationId: organization!.id }))).code).toBe(Code.Unauthenticated);
  });
});
