import { type Client, createClient, createRouterTransport, type Interceptor, type Transport } from "@connectrpc/connect";
import { Role } from "../../gen/docpipe/v1/account_pb.js";
import { AccountService } from "../../gen/docpipe/v1/account_service_pb.js";
import { AuditService } from "../../gen/docpipe/v1/audit_service_pb.js";
import { ServiceTokenService } from "../../gen/docpipe/v1/service_token_service_pb.js";
import { SigningSecretService } from "../../gen/docpipe/v1/signing_secret_service_pb.js";
import { peerAddressKey } from "../../src/platform/auth/caller.ts";
import { CSRF_HEADER, SESSION_COOKIE } from "../../src/platform/auth/session-cookie.ts";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { createServices, serviceRoutes } from "../../src/api/routes.ts";
import { OPERATOR_HEADERS } from "./services.ts";

/** Every client a caller of the management API may use. */
export type AllClients = ServiceClients & {
  accounts: Client<typeof AccountService>;
  audit: Client<typeof AuditService>;
  serviceTokens: Client<typeof ServiceTokenService>;
  signingSecrets: Client<typeof SigningSecretService>;
};

export function allClients(transport: Transport): AllClients {
  return {
    ...createServiceClients(transport),
    accounts: createClient(AccountService, transport),
    audit: createClient(AuditService, transport),
    serviceTokens: createClient(ServiceTokenService, transport),
    signingSecrets: createClient(SigningSecretService, transport),
  };
}

/** Sends these headers with every call. */
export function withHeaders(headers: Record<string, string>): Interceptor {
  return (next) => (request) => {
    for (const [name, value] of Object.entries(headers)) request.header.set(name, value);
    return next(request);
  };
}

/** The test header that stands for the client's address (the internal server takes it from the socket). */
export const PEER_HEADER = "x-test-peer-address";

/** In memory there is no socket: the client address comes from PEER_HEADER. */
const peerFromHeader: Interceptor = (next) => (request) => {
  request.contextValues.set(peerAddressKey, request.header.get(PEER_HEADER) ?? "");
  return next(request);
};

/** The headers a console page sends with a session: its cookie and the CSRF header. */
export function sessionHeaders(cookie: string): Record<string, string> {
  return { cookie: `${SESSION_COOKIE}=${cookie}`, [CSRF_HEADER]: "1" };
}

/** The session token a Set-Cookie header carries, if any. */
export function sessionTokenFrom(setCookie: string | null): string | undefined {
  return setCookie === null ? undefined : new RegExp(`${SESSION_COOKIE}=([^;]*)`).exec(setCookie)?.[1];
}

/**
 * The management services of one in-memory process as the internal port serves them (every caller
 * shows a credential), with a way to call them as the operator, as a person, or anonymously.
 */
export function peopleHarness(deps: ServiceDeps) {
  const routes = serviceRoutes(createServices(deps), { management: [peerFromHeader], trigger: [], callers: "credentials" });
  const as = (headers: Record<string, string>) => allClients(createRouterTransport(routes, { transport: { interceptors: [withHeaders(headers)] } }));
  const operator = as(OPERATOR_HEADERS);
  const anonymous = as({});

  /** A new person with `role` in the organization, signed in through an invitation link; returns their session token. */
  async function person(organizationId: string, role: Role, email = `${crypto.randomUUID()}@example.com`, password = "correct horse battery") {
    const { invitationToken } = await operator.members.createInvitation({ organizationId, email, role });
    let cookie: string | undefined;
    const { membership } = await anonymous.accounts.acceptInvitation(
      { invitationToken, name: "Test Person", password },
      { onHeader: (header) => (cookie = sessionTokenFrom(header.get("set-cookie"))) },
    );
    if (cookie === undefined) throw new Error("AcceptInvitation set no session cookie");
    return { accountId: membership!.account!.id, email, password, cookie, clients: as(sessionHeaders(cookie)) };
  }

  return { routes, as, operator, anonymous, person };
}

export { Role };
