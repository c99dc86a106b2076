/** A person's role in an organization, from most to least powerful. */
export type MemberRole = "owner" | "admin" | "member" | "reviewer" | "viewer";

/** What a caller may do to an organization; each RPC needs one (see rpc-permissions.ts). */
export type Permission =
  | "organization.read"
  | "organization.update"
  | "workspaces.read"
  | "workspaces.write"
  | "pipes.read"
  | "pipes.write"
  | "keys.read"
  | "keys.write"
  | "runs.read"
  | "runs.write"
  | "runs.review"
  | "signing_secrets.read"
  | "signing_secrets.write"
  | "members.read"
  | "members.write"
  | "owners.write"
  | "service_tokens.read"
  | "service_tokens.write"
  | "audit.read";

const VIEWER: readonly Permission[] = ["organization.read", "workspaces.read", "pipes.read", "keys.read", "runs.read", "signing_secrets.read", "members.read"];
const REVIEWER: readonly Permission[] = ["organization.read", "runs.read", "runs.review"];
const MEMBER: readonly Permission[] = [...VIEWER, "pipes.write", "keys.write", "runs.write", "runs.review"];
const ADMIN: readonly Permission[] = [
  ...MEMBER,
  "organization.update",
  "workspaces.write",
  "signing_secrets.write",
  "members.write",
  "service_tokens.read",
  "service_tokens.write",
  "audit.read",
];
const OWNER: readonly Permission[] = [...ADMIN, "owners.write"];

/**
 * Each role's permissions; a role is a fixed set, so the table in docs/security.md is the whole
 * story. Its keys are the roles as stored (MemberRole in src/data/db/schema.ts, which callers pass: a
 * role added there and not here fails the type check). No import of the schema: the console reads
 * this table too.
 */
const ROLE_PERMISSIONS = {
  owner: new Set(OWNER),
  admin: new Set(ADMIN),
  member: new Set(MEMBER),
  reviewer: new Set(REVIEWER),
  viewer: new Set(VIEWER),
} as const satisfies Record<string, ReadonlySet<Permission>>;

/** A role by its stored name. */
export type RoleName = keyof typeof ROLE_PERMISSIONS;

export function roleAllows(role: RoleName, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].has(permission);
}
