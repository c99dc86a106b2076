import { createContextKey } from "@connectrpc/connect";
import { type MemberRole, roleAllows } from "./roles.ts";

/**
 * Who makes a management call. A person (a session from the console) has a role in each of their
 * organizations; a service token has one role in one organization; the operator (INTERNAL_TOKEN, or
 * the process itself in-process) may do everything to every organization.
 */
export type Caller =
  | { kind: "operator"; id: string; name: string }
  | { kind: "account"; id: string; name: string; sessionId: string; roles: ReadonlyMap<string, MemberRole> }
  | { kind: "service_token"; id: string; name: string; organizationId: string; role: MemberRole };

/** The caller of the current RPC; undefined until a credential was recognised. */
export const callerKey = createContextKey<Caller | undefined>(undefined, { description: "the authenticated caller" });

/** The client address of the current RPC (the peer's socket address on the internal port). */
export const peerAddressKey = createContextKey<string>("", { description: "the client address" });

/** The caller's role in an organization; the operator's is owner everywhere. */
export function roleIn(caller: Caller, organizationId: string): MemberRole | undefined {
  switch (caller.kind) {
    case "operator":
      return "owner";
    case "service_token":
      return caller.organizationId === organizationId ? caller.role : undefined;
    case "account":
      return caller.roles.get(organizationId);
  }
}

/**
 * Whether the caller may change an organization's pipes (and so see the header values its callback
 * and HTTP request nodes send, which they set): a viewer sees them masked. No caller is the process
 * itself.
 */
export function mayChangePipes(caller: Caller | undefined, organizationId: string): boolean {
  if (caller === undefined) return true;
  const role = roleIn(caller, organizationId);
  return role !== undefined && roleAllows(role, "pipes.write");
}
