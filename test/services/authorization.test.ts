import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import { create, type DescMessage, type DescMethod, type DescService, ScalarType } from "@bufbuild/protobuf";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isChange, RPC_RULES } from "../../src/platform/auth/rpc-permissions.ts";
import { internalAccess } from "../../src/inbound/rpc/interceptors.ts";
import { type InternalServer, startInternalServer } from "../../src/inbound/rpc/server.ts";
import { createServices, serviceRoutes } from "../../src/api/routes.ts";
import { testDatabase } from "../support/database.ts";
import { createActivePipe } from "../support/edge.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";
import { peopleHarness, Role, withHeaders } from "../support/people.ts";
import { OPERATOR_HEADERS } from "../support/services.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";

/** Every service of the generated contract, found from gen/ so that a service or RPC added later is covered. */
async function generatedServices(): Promise<DescService[]> {
  const dir = resolve(import.meta.dirname, "../../gen/docpipe/v1");
  const services: DescService[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith("_service_pb.js"))) {
    const module = (await import(resolve(dir, file))) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === "object" && value !== null && (value as { kind?: string }).kind === "service") services.push(value as DescService);
    }
  }
  return services;
}

const services = await generatedServices();
const methods = services.flatMap((service) => service.methods.map((method) => ({ service, method, procedure: `${service.typeName}/${method.name}` })));
const management = methods.filter(({ service }) => service.typeName !== "docpipe.v1.TriggerService");
const organizationScoped = management.filter(({ procedure }) => RPC_RULES[procedure]?.scope === "organization");

/** A request for `method` naming `ids` (by field name, such as pipeId) and a fresh UUID in every other id field. */
function requestFor(input: DescMessage, ids: Record<string, string>) {
  const init: Record<string, string> = {};
  for (const field of input.fields) {
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING && field.localName.endsWith("Id")) {
      init[field.localName] = ids[field.localName] ?? crypto.randomUUID();
    }
  }
  return create(input, init);
}

function call(transport: Transport, service: DescService, method: DescMethod, message: unknown) {
  const client = createClient(service, transport) as unknown as Record<string, (request: unknown) => Promise<unknown>>;
  return client[method.localName]!(message);
}

describe("the permission table", () => {
  it("finds the services in gen/", () => {
    expect(services.map((service) => service.typeName)).toEqual(
      expect.arrayContaining([
        "docpipe.v1.KeyService",
        "docpipe.v1.PipeService",
        "docpipe.v1.RunService",
        "docpipe.v1.MemberService",
        "docpipe.v1.TriggerService",
      ]),
    );
  });

  it.each(methods.map(({ procedure }) => procedure))("has an entry for %s", (procedure) => {
    expect(RPC_RULES[procedure], `${procedure} needs an entry in src/platform/auth/rpc-permissions.ts`).toBeDefined();
  });

  it.each(organizationScoped.map(({ procedure, method }) => [procedure, method] as const))(
    "%s names its organization (organization_id) and, if it has one, the field of its resource id",
    (_procedure, method) => {
      expect(method.input.fields.map((field) => field.name)).toContain("organization_id");
      const rule = RPC_RULES[`${method.parent.typeName}/${method.name}`]!;
      if (rule.scope === "organization" && rule.idField !== undefined) expect(method.input.fields.map((field) => field.localName)).toContain(rule.idField);
    },
  );
});

describe("who may call which RPC", () => {
  let harness: ReturnType<typeof peopleHarness>;
  /** Ids of organization B's resources, by request field name. */
  const ofB: Record<string, string> = {};
  let memberOfA: Awaited<ReturnType<ReturnType<typeof peopleHarness>["person"]>>;
  let viewerOfB: Awaited<ReturnType<ReturnType<typeof peopleHarness>["person"]>>;

  beforeAll(async () => {
    const deps = testDeps(await testDatabase());
    harness = peopleHarness(deps);
    const { operator } = harness;
    const a = (await operator.workspaces.createOrganization({ name: "A" })).organization!;
    const b = (await operator.workspaces.createOrganization({ name: "B" })).organization!;
    ofB.organizationId = b.id;
    ofB.workspaceId = b.defaultWorkspaceId;
    ofB.pipeId = await createActivePipe(operator, b.id);
    ofB.keyId = (await operator.keys.createKey({ organizationId: b.id, name: "b key" })).key!.id;
    const { run } = await operator.trigger.createRun({
      organizationId: b.id,
      pipeId: ofB.pipeId,
      pipelineVersion: 1,
      file: { name: "a.pdf", contentType: "application/pdf", format: "pdf", size: 1n, sha256: "a".repeat(64) },
    });
    ofB.runId = run!.id;
    ofB.invitationId = (await operator.members.createInvitation({ organizationId: b.id, email: "later@example.com", role: Role.VIEWER })).invitation!.id;
    ofB.serviceTokenId = (await operator.serviceTokens.createServiceToken({ organizationId: b.id, name: "b token", role: Role.ADMIN })).serviceToken!.id;
    memberOfA = await harness.person(a.id, Role.OWNER);
    viewerOfB = await harness.person(b.id, Role.VIEWER);
    ofB.accountId = viewerOfB.accountId;
  });

  it.each(
    management
      .filter(({ procedure }) => RPC_RULES[procedure]?.scope !== "anyone")
      .map(({ procedure, service, method }) => [procedure, service, method] as const),
  )("anonymous: %s is Unauthenticated authentication_required", async (_procedure, service, method) => {
    const { createRouterTransport } = await import("@connectrpc/connect");
    const error = await connectErrorOf(call(createRouterTransport(harness.routes), service, method, requestFor(method.input, ofB)));
    expect([Code[error.code], reasonOf(error)]).toEqual(["Unauthenticated", "authentication_required"]);
  });

  it.each(organizationScoped.map(({ procedure, service, method }) => [procedure, service, method] as const))(
    "an owner of A calling %s on B's resources gets NotFound, as for a missing resource",
    async (procedure, service, method) => {
      const { createRouterTransport } = await import("@connectrpc/connect");
      const transport = createRouterTransport(harness.routes, { transport: { interceptors: [withHeaders(memberHeaders())] } });
      const error = await connectErrorOf(call(transport, service, method, requestFor(method.input, ofB)));
      const rule = RPC_RULES[procedure]!;
      expect([Code[error.code], reasonOf(error)]).toEqual(["NotFound", `${rule.scope === "organization" ? rule.resource : ""}_not_found`]);
    },
  );

  it.each(organizationScoped.map(({ procedure, service, method }) => [procedure, service, method] as const))(
    "%s without an organization_id is InvalidArgument naming the field, for the operator and for a person alike",
    async (_procedure, service, method) => {
      const { createRouterTransport } = await import("@connectrpc/connect");
      for (const headers of [OPERATOR_HEADERS, memberHeaders()]) {
        const transport = createRouterTransport(harness.routes, { transport: { interceptors: [withHeaders(headers)] } });
        const error = await connectErrorOf(call(transport, service, method, requestFor(method.input, { ...ofB, organizationId: "" })));
        expect([Code[error.code], reasonOf(error), errorInfoOf(error)?.metadata.field]).toEqual(["InvalidArgument", "invalid_argument", "organization_id"]);
      }
    },
  );

  it.each(
    organizationScoped
      .filter(({ procedure }) => isChange(RPC_RULES[procedure]!))
      .map(({ procedure, service, method }) => [procedure, service, method] as const),
  )("a viewer of B calling %s gets PermissionDenied", async (_procedure, service, method) => {
    const { createRouterTransport } = await import("@connectrpc/connect");
    const transport = createRouterTransport(harness.routes, { transport: { interceptors: [withHeaders(viewerHeaders())] } });
    const error = await connectErrorOf(call(transport, service, method, requestFor(method.input, ofB)));
    expect([Code[error.code], reasonOf(error)]).toEqual(["PermissionDenied", "permission_denied"]);
  });

  it("a viewer of B reads B's pipes, keys and runs", async () => {
    const { pipes, keys, runs } = viewerOfB.clients;
    expect((await pipes.getPipe({ organizationId: ofB.organizationId!, pipeId: ofB.pipeId! })).pipe!.id).toBe(ofB.pipeId);
    expect((await keys.listKeys({ organizationId: ofB.organizationId! })).keys).toHaveLength(1);
    expect((await runs.getRun({ organizationId: ofB.organizationId!, runId: ofB.runId! })).run!.id).toBe(ofB.runId);
  });

  it("a viewer sees a callback's and an HTTP request's header values masked; a member, who may change them, in clear", async () => {
    const { operator } = harness;
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 1 } } },
        { id: "lookup", kind: { case: "httpRequest", value: { url: '"https://erp.example.com/api"', headers: { "X-Api-Key": "erp-s3cret" } } } },
        { id: "notify", kind: { case: "callback", value: { url: "https://hooks.example.com/in", headers: { Authorization: "Bearer hook-s3cret" } } } },
      ],
    });
    const { pipe } = await operator.pipes.createPipe({ organizationId: ofB.organizationId!, name: "with secrets", pipeline });
    const headersOf = (nodes: { kind: { case?: string; value?: unknown } }[]) =>
      nodes.flatMap((node) =>
        node.kind.case === "callback" || node.kind.case === "httpRequest" ? [(node.kind.value as { headers: Record<string, string> }).headers] : [],
      );
    const ids = { organizationId: ofB.organizationId!, pipeId: pipe!.id };
    const seen = [
      (await viewerOfB.clients.pipes.getPipe(ids)).pipe!.pipeline!.nodes,
      (await viewerOfB.clients.pipes.listPipes({ organizationId: ofB.organizationId! })).pipes.find((listed) => listed.id === pipe!.id)!.pipeline!.nodes,
      (await viewerOfB.clients.pipes.getPipelineVersion({ ...ids, version: 1 })).pipelineVersion!.pipeline!.nodes,
    ];
    for (const nodes of seen) expect(headersOf(nodes)).toEqual([{ "X-Api-Key": "****" }, { Authorization: "****" }]);
    const member = await harness.person(ofB.organizationId!, Role.MEMBER);
    expect(headersOf((await member.clients.pipes.getPipe(ids)).pipe!.pipeline!.nodes)).toEqual([
      { "X-Api-Key": "erp-s3cret" },
      { Authorization: "Bearer hook-s3cret" },
    ]);
  });

  it("a viewer does not read a callback URL's token (path and query), which test-mode previews mask as they mask header values", async () => {
    // The token of a chat webhook (Slack, Teams, Discord) is its URL's path; previewUrl masks it in
    // run outputs for that reason (0c09e0b), but GetPipe gives it to every viewer in clear.
    const pipeline = create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf"], maxSizeMb: 1 } } },
        { id: "notify", kind: { case: "callback", value: { url: "https://hooks.slack.com/services/T000/B000/hook-s3cret?token=q-s3cret" } } },
      ],
    });
    const { pipe } = await harness.operator.pipes.createPipe({ organizationId: ofB.organizationId!, name: "webhook with a token", pipeline });
    const seen = (await viewerOfB.clients.pipes.getPipe({ organizationId: ofB.organizationId!, pipeId: pipe!.id })).pipe!.pipeline!.nodes;
    const url = (seen.find((node) => node.kind.case === "callback")!.kind.value as { url: string }).url;
    expect(url).not.toContain("hook-s3cret");
    expect(url).not.toContain("q-s3cret");
  });

  it("a person lists only the organizations they belong to", async () => {
    const { organizations } = await viewerOfB.clients.workspaces.listOrganizations({});
    expect(organizations.map((organization) => organization.id)).toEqual([ofB.organizationId]);
  });

  it("only the operator creates organizations", async () => {
    const error = await connectErrorOf(memberOfA.clients.workspaces.createOrganization({ name: "mine" }));
    expect([Code[error.code], reasonOf(error)]).toEqual(["PermissionDenied", "permission_denied"]);
  });

  function memberHeaders() {
    return { cookie: `docpipe_session=${memberOfA.cookie}`, "x-docpipe-console": "1" };
  }
  function viewerHeaders() {
    return { cookie: `docpipe_session=${viewerOfB.cookie}`, "x-docpipe-console": "1" };
  }
});

describe("the same answers over Connect, gRPC and gRPC-Web on the internal port", () => {
  let server: InternalServer;
  let tokenOfA: string;
  let idOfA: string;
  const ofB: Record<string, string> = {};

  beforeAll(async () => {
    const deps = testDeps(await testDatabase());
    const { operator } = peopleHarness(deps);
    const a = (await operator.workspaces.createOrganization({ name: "A" })).organization!;
    const b = (await operator.workspaces.createOrganization({ name: "B" })).organization!;
    ofB.organizationId = b.id;
    idOfA = a.id;
    ofB.pipeId = await createActivePipe(operator, b.id);
    tokenOfA = (await operator.serviceTokens.createServiceToken({ organizationId: a.id, name: "a", role: Role.ADMIN })).tokenValue;
    const access = internalAccess(pino({ level: "silent" }), { internalToken: deps.config.internalToken, triggerToken: undefined });
    server = await startInternalServer(serviceRoutes(createServices(deps), access), { host: "127.0.0.1", port: 0, allowedHosts: ["127.0.0.1"] });
  });
  afterAll(() => server.close(1000));

  const protocols = {
    Connect: (baseUrl: string) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    gRPC: (baseUrl: string) => createGrpcTransport({ baseUrl }),
    "gRPC-Web": (baseUrl: string) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  };

  it("anonymous callers and another organization's token get the same codes and reasons over each protocol", async () => {
    const answers: Record<string, string[][]> = {};
    for (const [name, transportAt] of Object.entries(protocols)) {
      const transport = transportAt(`http://127.0.0.1:${server.port}`);
      answers[name] = [];
      for (const { service, method } of organizationScoped) {
        const anonymous = await connectErrorOf(call(transport, service, method, requestFor(method.input, ofB)));
        const client = createClient(service, transport) as unknown as Record<string, (request: unknown, options: unknown) => Promise<unknown>>;
        const other = await connectErrorOf(client[method.localName]!(requestFor(method.input, ofB), { headers: { authorization: `Bearer ${tokenOfA}` } }));
        answers[name].push([method.name, Code[anonymous.code], String(reasonOf(anonymous)), Code[other.code], String(reasonOf(other))]);
      }
    }
    for (const [, anonymous, reason, other, otherReason] of answers.Connect!) {
      expect([anonymous, reason]).toEqual(["Unauthenticated", "authentication_required"]);
      expect(other).toBe("NotFound");
      expect(otherReason).toMatch(/_not_found$/);
    }
    expect(answers.gRPC).toEqual(answers.Connect);
    expect(answers["gRPC-Web"]).toEqual(answers.Connect);
  });

  it("refuses JSON naming a field or an enum value the contract does not have: a typo saved a different pipeline", async () => {
    const createPipe = (parse: object) =>
      fetch(`http://127.0.0.1:${server.port}/docpipe.v1.PipeService/CreatePipe`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tokenOfA}` },
        body: JSON.stringify({
          organizationId: idOfA,
          name: "Typed by hand",
          pipeline: {
            nodes: [
              { id: "in", httpTrigger: { acceptedFormats: ["pdf"], maxSizeMb: 10 } },
              { id: "parse", parse },
            ],
          },
        }),
      });
    for (const parse of [{ rulingLine: true }, { ocr: "never" }]) {
      const refused = await createPipe(parse);
      expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([400, "invalid_argument"]);
    }
    const saved = await createPipe({ rulingLines: true, ocr: "OCR_MODE_NEVER" });
    const { pipe } = (await saved.json()) as { pipe: { pipeline: { nodes: { parse?: object }[] } } };
    expect([saved.status, pipe.pipeline.nodes[1]!.parse]).toEqual([200, { ocr: "OCR_MODE_NEVER", rulingLines: true }]);
  });
});
