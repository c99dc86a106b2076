import { Code, createClient, createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request as httpRequest } from "node:http";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import { internalAccess } from "../../src/inbound/rpc/interceptors.ts";
import { INTERNAL_READ_MAX_BYTES, type InternalServer, startInternalServer } from "../../src/inbound/rpc/server.ts";
import { createServices, serviceRoutes } from "../../src/api/routes.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";

const MISSING_ID = "01890000-0000-7000-8000-000000000000";
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

let deps: ReturnType<typeof testDeps>;
beforeAll(async () => {
  deps = testDeps(await testDatabase(), { INTERNAL_TOKEN: "s3cret" });
});

describe("INTERNAL_TOKEN as the operator's credential (in memory)", () => {
  const withToken = (header?: string) =>
    createClient(
      WorkspaceService,
      createRouterTransport(serviceRoutes(createServices(deps), { management: [], trigger: [], callers: "credentials" }), {
        transport: { interceptors: header === undefined ? [] : [(next) => (request) => (request.header.set("authorization", header), next(request))] },
      }),
    );

  it("refuses a call without Authorization: Unauthenticated authentication_required", async () => {
    const error = await connectErrorOf(withToken().listOrganizations({}));
    expect(error.code).toBe(Code.Unauthenticated);
    expect(reasonOf(error)).toBe("authentication_required");
  });

  it.each(["Bearer wrong", "s3cret", "Bearer s3cret2", "Basic s3cret"])("refuses %j: Unauthenticated credentials_invalid", async (header) => {
    const error = await connectErrorOf(withToken(header).listOrganizations({}));
    expect([Code[error.code], reasonOf(error)]).toEqual(["Unauthenticated", "credentials_invalid"]);
  });

  it("says which token it wanted: INTERNAL_TOKEN or a service token; without INTERNAL_TOKEN set, that it has none", async () => {
    const refused = await connectErrorOf(withToken("Bearer wrong").listOrganizations({}));
    expect(refused.rawMessage).toBe("the bearer token is neither INTERNAL_TOKEN nor a service token");
    const withoutToken = testDeps(deps.db, { INTERNAL_TOKEN: "" });
    const client = createClient(
      WorkspaceService,
      createRouterTransport(serviceRoutes(createServices(withoutToken), { management: [], trigger: [], callers: "credentials" }), {
        transport: { interceptors: [(next) => (request) => (request.header.set("authorization", "Bearer s3cret"), next(request))] },
      }),
    );
    const error = await connectErrorOf(client.listOrganizations({}));
    expect([Code[error.code], reasonOf(error), error.rawMessage]).toEqual([
      "Unauthenticated",
      "credentials_invalid",
      "the bearer token is not a service token, and this server has no INTERNAL_TOKEN set",
    ]);
  });

  it("lets the right bearer token through", async () => {
    const { organization } = await withToken("Bearer s3cret").createOrganization({ name: "token test" });
    expect(organization!.id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("internal server: Connect and gRPC over HTTP/1.1 and HTTP/2 on one port", () => {
  let server: InternalServer;
  beforeAll(async () => {
    const access = internalAccess(pino({ level: "silent" }), { internalToken: "s3cret", triggerToken: "tr1gger" });
    server = await startInternalServer(serviceRoutes(createServices(deps), access), { host: "127.0.0.1", port: 0, allowedHosts: LOOPBACK_HOSTS });
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

describe("internal server: TriggerService is authorized apart from the management services", () => {
  let server: InternalServer;
  let baseUrl: string;
  beforeAll(async () => {
    const access = internalAccess(pino({ level: "silent" }), { internalToken: "manage", triggerToken: "edge" });
    const manageDeps = testDeps(deps.db, { INTERNAL_TOKEN: "manage" });
    server = await startInternalServer(serviceRoutes(createServices(manageDeps), access), { host: "127.0.0.1", port: 0, allowedHosts: LOOPBACK_HOSTS });
    baseUrl = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close(1000));

  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

  it("the management token cannot create runs or authenticate keys; the trigger token can", async () => {
    const trigger = createClient(TriggerService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const request = {
      organizationId: MISSING_ID,
      pipeId: MISSING_ID,
      pipelineVersion: 1,
      file: { name: "a.pdf", format: "pdf", size: 1n, sha256: "a".repeat(64) },
    };
    const refused = await connectErrorOf(trigger.createRun(request, bearer("manage")));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["Unauthenticated", "internal_token_invalid"]);
    const keyRefused = await connectErrorOf(trigger.authenticateKey({ keyValue: "dp_x" }, bearer("manage")));
    expect([Code[keyRefused.code], reasonOf(keyRefused)]).toEqual(["Unauthenticated", "internal_token_invalid"]);
    // With the trigger token the call reaches the service (an unknown pipe is NotFound).
    const missing = await connectErrorOf(trigger.createRun(request, bearer("edge")));
    expect([Code[missing.code], reasonOf(missing)]).toEqual(["NotFound", "pipe_not_found"]);
  });

  it("the trigger token cannot manage", async () => {
    const workspaces = createClient(WorkspaceService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const refused = await connectErrorOf(workspaces.listOrganizations({}, bearer("edge")));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["Unauthenticated", "credentials_invalid"]);
    expect((await workspaces.listOrganizations({ pageSize: 1 }, bearer("manage"))).organizations).toBeDefined();
  });

  it("without TRIGGER_TOKEN, TriggerService takes INTERNAL_TOKEN", async () => {
    const access = internalAccess(pino({ level: "silent" }), { internalToken: "one", triggerToken: undefined });
    const trigger = createClient(TriggerService, createRouterTransport(serviceRoutes(createServices(deps), access)));
    const refused = await connectErrorOf(trigger.releaseIdempotencyKey({ organizationId: MISSING_ID, idempotencyKey: "k" }, bearer("two")));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["Unauthenticated", "internal_token_invalid"]);
    expect(await trigger.releaseIdempotencyKey({ organizationId: MISSING_ID, idempotencyKey: "k" }, bearer("one"))).toBeDefined();
  });

  it("without either token, TriggerService answers no one over the network", async () => {
    const access = internalAccess(pino({ level: "silent" }), { internalToken: undefined, triggerToken: undefined });
    const trigger = createClient(TriggerService, createRouterTransport(serviceRoutes(createServices(deps), access)));
    const refused = await connectErrorOf(trigger.authenticateKey({ keyValue: "dp_x" }, bearer("any")));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["Unauthenticated", "internal_token_invalid"]);
    const anonymous = await connectErrorOf(trigger.authenticateKey({ keyValue: "dp_x" }));
    expect([Code[anonymous.code], reasonOf(anonymous)]).toEqual(["Unauthenticated", "authentication_required"]);
  });

  it("an anonymous caller is answered authentication_required, as by the management services (docs/security.md)", async () => {
    const trigger = createClient(TriggerService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    const refused = await connectErrorOf(trigger.authenticateKey({ keyValue: "dp_x" }));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["Unauthenticated", "authentication_required"]);
  });
});

describe("internal server: bounded and answering only its own host names", () => {
  let server: InternalServer;
  beforeAll(async () => {
    server = await startInternalServer(serviceRoutes(createServices(deps), { management: [], trigger: [], callers: "credentials" }), {
      host: "127.0.0.1",
      port: 0,
      allowedHosts: [...LOOPBACK_HOSTS, "docpipe.internal"],
    });
  });
  afterAll(() => server.close(1000));

  const post = (host: string, body = "{}", headers: Record<string, string> = { authorization: "Bearer s3cret" }) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(
        {
          host: "127.0.0.1",
          port: server.port,
          method: "POST",
          path: "/docpipe.v1.WorkspaceService/ListOrganizations",
          headers: { host, "content-type": "application/json", ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() }));
        },
      );
      request.on("error", reject);
      request.end(body);
    });

  it.each(["localhost:8081", "127.0.0.1", "[::1]:8081", "DOCPIPE.internal:8081"])("answers Host %s", async (host) => {
    expect((await post(host)).status).toBe(200);
  });

  it.each(["localhost", "localhost:8081", "127.0.0.1"])("a forwarded port reached with Host %s gains nothing without a credential: 401", async (host) => {
    const response = await post(host, "{}", {});
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body)).toMatchObject({ code: "unauthenticated" });
  });

  it.each(["attacker.example", "attacker.example:8081", "localhost.attacker.example", "127.0.0.1.nip.io"])(
    "refuses Host %s with 421 (DNS rebinding)",
    async (host) => {
      const response = await post(host);
      expect(response.status).toBe(421);
      expect(JSON.parse(response.body)).toMatchObject({ code: "permission_denied" });
    },
  );

  it("refuses a request message larger than INTERNAL_READ_MAX_BYTES with ResourceExhausted", async () => {
    const workspaces = createClient(WorkspaceService, createConnectTransport({ baseUrl: `http://127.0.0.1:${server.port}`, httpVersion: "1.1" }));
    const error = await connectErrorOf(workspaces.createOrganization({ name: "x".repeat(INTERNAL_READ_MAX_BYTES + 1) }));
    expect(Code[error.code]).toBe("ResourceExhausted");
  });
});
