import { useQuery } from "@connectrpc/connect-query";
import { Role } from "../../gen/docpipe/v1/account_pb.js";
import { getCurrentAccount } from "../../gen/docpipe/v1/account_service-AccountService_connectquery.js";
import { type Permission, type RoleName, roleAllows } from "../../src/auth/roles.ts";

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
  const account = useQuery(getCurrentAccount, {}, { retry: false });
  const role = account.data?.memberships.find((membership) => membership.organizationId === org)?.role;
  const name = role === undefined ? undefined : ROLE_NAMES[role];
  return (permission) => name === undefined || roleAllows(name, permission);
}
