import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { WorkspaceService } from "../gen/docpipe/v1/workspace_service_pb.js";
import { KeyService } from "../gen/docpipe/v1/key_service_pb.js";
import { createDirectTransport } from "../src/api/direct-transport.ts";
import { serviceError } from "../src/api/errors.ts";
import { connectErrorOf, reasonOf } from "./support/errors.ts";

describe("direct transport", () => {
  const seen: string[] = [];
  const outer: Interceptor = (next) => async (request) => (seen.push(`outer ${request.method.name}`), next(request));
  const inner: Interceptor = (next) => async (request) => (seen.push("inner"), next(request));
  const transport = createDirectTransport((router) => {
    router.service(
      WorkspaceService,
      {
        async getOrganization(request, context) {
          if (request.organizationId === "missing") throw serviceError(Code.NotFound, "organization_not_found", "organization not found");
          if (request.organizationId === "bug") throw new Error("internal detail");
          if (request.organizationId === "context") {
            // What the implementation sees of the call, as the organization's name.
            return { organization: { id: "context", name: JSON.stringify({ aborted: context.signal.aborted, timeoutMs: context.timeoutMs() ?? null }) } };
          }
          context.responseHeader.set("x-seen", "yes");
          return { organization: { id: request.organizationId, name: context.requestHeader.get("x-name") ?? "" } };
        },
      },
      { interceptors: [outer, inner] },
    );
  });
  const client = createClient(WorkspaceService, transport);

  it("calls the implementation with a message and returns a message, through the interceptors in order", async () => {
    seen.length = 0;
    let responseHeader: Headers | undefined;
    const response = await client.getOrganization({ organizationId: "o1" }, { headers: { "x-name": "Acme" }, onHeader: (header) => (responseHeader = header) });
    expect(response.$typeName).toBe("docpipe.v1.GetOrganizationResponse");
    expect(response.organization).toMatchObject({ id: "o1", name: "Acme" });
    expect(responseHeader?.get("x-seen")).toBe("yes");
    expect(seen).toEqual(["outer GetOrganization", "inner"]);
  });

  it("keeps a service's ConnectError with its ErrorInfo", async () => {
    const error = await connectErrorOf(client.getOrganization({ organizationId: "missing" }));
    expect(error.code).toBe(Code.NotFound);
    expect(reasonOf(error)).toBe("organization_not_found");
  });

  it("turns any other failure into a ConnectError", async () => {
    const error = await connectErrorOf(client.getOrganization({ organizationId: "bug" }));
    expect(error).toBeInstanceOf(ConnectError);
    expect(error.code).toBe(Code.Unknown);
  });

  it("gives the implementation the caller's signal, and the remaining time when the call has a deadline", async () => {
    const seenBy = async (options: { signal?: AbortSignal; timeoutMs?: number }) =>
      JSON.parse((await client.getOrganization({ organizationId: "context" }, options)).organization!.name) as { aborted: boolean; timeoutMs: number | null };
    expect(await seenBy({})).toEqual({ aborted: false, timeoutMs: null });
    const cancelled = new AbortController();
    cancelled.abort();
    expect(await seenBy({ signal: cancelled.signal })).toEqual({ aborted: true, timeoutMs: null });
    const { timeoutMs } = await seenBy({ timeoutMs: 60_000 });
    expect(timeoutMs).toBeGreaterThan(50_000);
    expect(timeoutMs).toBeLessThanOrEqual(60_000);
  });

  it("is Unimplemented for a method or service that was not registered", async () => {
    expect((await connectErrorOf(client.listOrganizations({}))).code).toBe(Code.Unimplemented);
    expect((await connectErrorOf(createClient(KeyService, transport).getKey({}))).code).toBe(Code.Unimplemented);
  });
});
