import { useQuery } from "@connectrpc/connect-query";
import { Role } from "../../gen/docpipe/v1/account_pb.js";
import { getCurrentAccount } from "../../gen/docpipe/v1/account_service-AccountService_connectquery.js";
import { type Permission, type RoleName, roleAllows } from "../../src/platform/auth/roles.ts";

const ROLE_NAMES: Readonly<Partial<Record<Role, RoleName>>> = {
  [Role.OWNER]: "owner",
  [Role.ADMIN]: "admin",
  [Role.MEMBER]: "member",
  [Role.REVIEWER]: "reviewer",
  [Role.VIEWER]: "viewer",
};

/**
 * What the signed-in person may do in `org`, by their role there (the service's own table), so a
 * page hides the buttons the service would refuse; the service still decides. Everything while the
 * role is not known yet, and for an operator's token, which has no account.
 */
export function usePermissions(org: string): (permission: Permission) => boolean {
  const name = useRoleName(org);
  return (permission) => name === undefined || name === null || roleAllows(name, permission);
}

/** What the signed-in person's role is in `org`: a name, undefined while not known, or null for an operator's token (no account). */
function useRoleName(org: string): RoleName | null | undefined {
  const account = useQuery(getCurrentAccount, {}, { retry: false });
  if (account.error) return null;
  if (account.data === undefined) return undefined;
  const role = account.data.memberships.find((membership) => membership.organizationId === org)?.role;
  return (role === undefined ? undefined : ROLE_NAMES[role]) ?? null;
}

/**
 * The page a role opens an organization on: `preferred` when the role may read it, else the review
 * queue (a reviewer reads runs to review, not pipes or keys). Undefined while the role is not known.
 */
export function useLandingPage(org: string | undefined, preferred: "pipes" | "keys"): "pipes" | "keys" | "review" | undefined {
  const name = useRoleName(org ?? "");
  if (org === undefined || name === undefined) return undefined;
  return landing(name, preferred);
}

/** The same for a role given by the service (an invitation just accepted). */
export function landingPageOf(role: Role, preferred: "pipes" | "keys"): "pipes" | "keys" | "review" {
  return landing(ROLE_NAMES[role] ?? null, preferred);
}

/** `preferred` for a role that reads it, or for no known role (an operator's token); else the review queue. */
function landing(name: RoleName | null, preferred: "pipes" | "keys"): "pipes" | "keys" | "review" {
  return name === null || roleAllows(name, `${preferred}.read`) ? preferred : "review";
}
