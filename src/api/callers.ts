import { Code, type ConnectError, type Interceptor } from "@connectrpc/connect";
import { type Caller, callerKey, peerAddressKey, roleIn } from "../platform/auth/caller.ts";
import { roleAllows } from "../platform/auth/roles.ts";
import { isChange, RPC_RULES, type RpcRule } from "../platform/auth/rpc-permissions.ts";
import { isSecretToken } from "../platform/auth/secrets.ts";
import { CSRF_HEADER, sessionTokenOf } from "../platform/auth/session-cookie.ts";
import { bearerTokenCheck } from "../platform/auth/bearer-token.ts";
import { newId } from "../platform/ids.ts";
import { isWellFormedKeyValue, keyDigest } from "../platform/keys/key-value.ts";
import { insertAuditEvent } from "../data/repositories/audit-events.ts";
import { findServiceTokenByDigest, recordServiceTokenUse } from "../data/repositories/service-tokens.ts";
import { findLiveSession, touchSession } from "../data/repositories/sessions.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isExpired } from "../platform/keys/key-lifetime.ts";

/** The prefix of service token values (`dpst_…`), told apart from API keys at a glance. */
export const SERVICE_TOKEN_PREFIX = "dpst";

/** last_seen_time and last_used_time are written at most once per this interval. */
const USE_RESOLUTION_MS = 60_000;

/** A recognised caller; a refusal for a credential sent but no good (it counts only where a credential is needed); or no credential at all. */
type Authenticated = { caller: Caller } | { refusal: ConnectError } | undefined;

/** Resolves the caller of an RPC from its headers: INTERNAL_TOKEN, a service token, or a session cookie. */
export type Authenticator = (header: Headers) => Promise<Authenticated>;

function unauthenticated(reason: string, message: string): ConnectError {
  return serviceError(Code.Unauthenticated, reason, message);
}

export function createAuthenticator(deps: ServiceDeps, caches: Pick<ServiceCaches, "sessions">): Authenticator {
  const { db, config } = deps;
  const isOperatorToken = config.internalToken === undefined ? () => false : bearerTokenCheck(config.internalToken);
  // Without INTERNAL_TOKEN set, a newcomer's usual mistake is a token exported in the shell but not given to the server.
  const notOurs =
    config.internalToken === undefined
      ? "the bearer token is not a service token, and this server has no INTERNAL_TOKEN set"
      : "the bearer token is neither INTERNAL_TOKEN nor a service token";
  const idleMs = config.sessionIdleMinutes * 60_000;

  async function serviceToken(value: string): Promise<Authenticated> {
    if (!value.startsWith(`${SERVICE_TOKEN_PREFIX}_`) || !isWellFormedKeyValue(value)) {
      return { refusal: unauthenticated("credentials_invalid", notOurs) };
    }
    const token = await findServiceTokenByDigest(db, keyDigest(value));
    if (token === undefined) return { refusal: unauthenticated("service_token_invalid", "the service token is not known; it may have been deleted") };
    const now = deps.now();
    if (isExpired(token.expire_time, now)) return { refusal: unauthenticated("service_token_expired", "the service token has expired") };
    recordServiceTokenUse(db, token.id, now, USE_RESOLUTION_MS).catch(() => {});
    return { caller: { kind: "service_token", id: token.id, name: token.name, organizationId: token.organization_id, role: token.role } };
  }

  async function session(header: Headers, token: string): Promise<Authenticated> {
    if (header.get(CSRF_HEADER) !== "1") {
      return { refusal: unauthenticated("csrf_header_missing", `calls made with the session cookie must carry the ${CSRF_HEADER}: 1 header`) };
    }
    const now = deps.now();
    const idleSince = new Date(now.getTime() - idleMs);
    const digest = isSecretToken(token) ? keyDigest(token) : undefined;
    const found = digest === undefined ? undefined : await caches.sessions.get(digest.toString("hex"), () => findLiveSession(db, digest, now, idleSince));
    // Checked on every call, a cached session included: expiry stays exact.
    if (found === undefined || found.expire_time <= now || found.last_seen_time <= idleSince) {
      return { refusal: unauthenticated("session_expired", "the session has ended; sign in again") };
    }
    // Awaited: the idle expiry must have moved on before the caller's next call is checked.
    if (now.getTime() - found.last_seen_time.getTime() >= USE_RESOLUTION_MS) {
      await touchSession(db, found.session_id, now, USE_RESOLUTION_MS);
      found.last_seen_time = now;
    }
    return {
      caller: { kind: "account", id: found.account_id, name: found.email, sessionId: found.session_id, roles: new Map(Object.entries(found.roles ?? {})) },
    };
  }

  return async (header) => {
    const authorization = header.get("authorization");
    if (authorization !== null) {
      if (isOperatorToken(authorization)) return { caller: { kind: "operator", id: "operator", name: "operator" } };
      if (!authorization.startsWith("Bearer ")) return { refusal: unauthenticated("credentials_invalid", "send Authorization: Bearer <token>") };
      return serviceToken(authorization.slice("Bearer ".length).trim());
    }
    const token = sessionTokenOf(header.get("cookie"));
    return token === undefined ? undefined : session(header, token);
  };
}

/** The process calling its own services in-process (the demo seeding): the operator. */
const PROCESS_CALLER: Caller = { kind: "operator", id: "process", name: "docpipe" };

/** Who calls: from the request's credentials (any network interface), or the process itself (in-process). */
export type CallerSource = { kind: "credentials"; authenticate: Authenticator } | { kind: "process" };

function procedureOf(request: { service: { typeName: string }; method: { name: string } }): string {
  return `${request.service.typeName}/${request.method.name}`;
}

/** The rule of a procedure; one missing from the table is refused, never let through. */
function ruleOf(procedure: string): RpcRule {
  const rule = RPC_RULES[procedure];
  if (rule === undefined) throw serviceError(Code.PermissionDenied, "rpc_not_authorized", `${procedure} has no entry in the permission table`);
  return rule;
}

function permissionDenied(message: string): ConnectError {
  return serviceError(Code.PermissionDenied, "permission_denied", message);
}

/** Refuses the call unless `caller` may make it under `rule`; `message` is the request. */
function authorize(rule: RpcRule, caller: Caller | undefined, refusal: ConnectError | undefined, message: Record<string, unknown>): void {
  if (rule.scope === "anyone") return;
  if (caller === undefined) {
    throw refusal ?? unauthenticated("authentication_required", "sign in, or send Authorization: Bearer <service token or INTERNAL_TOKEN>");
  }
  switch (rule.scope) {
    case "edge":
      throw permissionDenied("TriggerService is served to the edge only");
    case "operator":
      if (caller.kind !== "operator") throw permissionDenied("only the operator (INTERNAL_TOKEN) may do this");
      return;
    case "signed_in":
      if (caller.kind !== "account") throw permissionDenied("only a person signed in to the console may do this");
      return;
    case "authenticated":
      return;
    case "organization": {
      const organizationId = typeof message.organizationId === "string" ? message.organizationId : "";
      // A field left out tells nothing of any organization: named, as any missing field is.
      if (organizationId === "") throw invalidArgument("organization_id", "organization_id is required: the id of the organization the request acts in");
      const role = roleIn(caller, organizationId);
      // Another organization's resources look exactly like missing ones.
      if (role === undefined) throw notFound(rule.resource);
      if (!roleAllows(role, rule.permission)) throw permissionDenied(`the ${role} role does not allow ${rule.permission}`);
      return;
    }
  }
}

/** The caller, once `rule` lets it make the request `message`; throws the refusal otherwise. */
export function authorizeCaller(rule: RpcRule, authenticated: Authenticated, message: Record<string, unknown>): Caller | undefined {
  const caller = authenticated !== undefined && "caller" in authenticated ? authenticated.caller : undefined;
  const refusal = authenticated !== undefined && "refusal" in authenticated ? authenticated.refusal : undefined;
  authorize(rule, caller, refusal, message);
  return caller;
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** What a change was made to: the request's id field, else the resource the response carries, else the organization. */
function auditedResource(rule: RpcRule, request: Record<string, unknown>, response: Record<string, unknown>): { type: string; id: string } {
  if (rule.scope === "organization" && rule.idField !== undefined) return { type: rule.resource, id: String(request[rule.idField] ?? "") };
  for (const [field, value] of Object.entries(response)) {
    if (typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string") {
      return { type: snakeCase(field), id: (value as { id: string }).id };
    }
  }
  return { type: "organization", id: String(request.organizationId ?? "") };
}

/** A change `caller` made, in the audit log: what (`action`), to which resource, from which address. */
export function recordChange(
  deps: ServiceDeps,
  caller: Caller,
  change: { organizationId: string | null; action: string; resource: { type: string; id: string }; address: string },
): Promise<void> {
  return insertAuditEvent(deps.db, {
    id: newId(),
    organization_id: change.organizationId,
    time: deps.now(),
    actor_kind: caller.kind,
    actor_id: caller.id,
    actor_name: caller.name,
    action: change.action,
    resource_type: change.resource.type,
    resource_id: change.resource.id,
    address: change.address,
    outcome: "ok",
  });
}

/**
 * The caller of every management RPC (a context value), then the permission table's check, then
 * (after a change succeeds) its audit event. Deny by default: without a caller only `anyone` RPCs
 * answer, and an RPC missing from the table is refused.
 */
export function accessInterceptor(deps: ServiceDeps, source: CallerSource): Interceptor {
  return (next) => async (request) => {
    const rule = ruleOf(procedureOf(request));
    const authenticated = source.kind === "process" ? { caller: PROCESS_CALLER } : await source.authenticate(request.header);
    const message = (request.stream ? {} : request.message) as Record<string, unknown>;
    const caller = authorizeCaller(rule, authenticated, message);
    request.contextValues.set(callerKey, caller);
    const response = await next(request);
    if (caller !== undefined && isChange(rule) && !response.stream) {
      const resource = auditedResource(rule, message, response.message as Record<string, unknown>);
      const organizationId = typeof message.organizationId === "string" && message.organizationId !== "" ? message.organizationId : null;
      await recordChange(deps, caller, {
        organizationId: organizationId ?? (resource.type === "organization" ? resource.id : null),
        action: procedureOf(request),
        resource,
        address: request.contextValues.get(peerAddressKey),
      });
    }
    return response;
  };
}
