import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Account, AccountSchema, type Membership, MembershipSchema, Role } from "../../gen/docpipe/v1/account_pb.js";
import type { MemberRole } from "../platform/auth/roles.ts";
import type { AccountRow } from "../data/repositories/accounts.ts";
import type { MemberRow } from "../data/repositories/memberships.ts";
import { EnumColumn } from "./enum-columns.ts";
import { invalidArgument } from "./errors.ts";

/** Roles as stored and as the contract names them. */
export const ROLES = new EnumColumn<MemberRole, Role>("a Role", {
  owner: Role.OWNER,
  admin: Role.ADMIN,
  member: Role.MEMBER,
  reviewer: Role.REVIEWER,
  viewer: Role.VIEWER,
});

/** The role a request names; UNSPECIFIED or an unknown value is InvalidArgument. */
export function requireRole(role: Role, field = "role"): MemberRole {
  const column = ROLES.filter(role, field);
  if (column === undefined) throw invalidArgument(field, `${field} is required`);
  return column;
}

const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,255}$/u;
const MAX_EMAIL_LENGTH = 320;
const CONTROL = /\p{Cc}/u;

/**
 * Whether `text` may be an email as the database keeps it: no control character (PostgreSQL drops
 * a NUL, and "a\0b@x" would then be another address than the one checked), no half of a surrogate
 * pair, at most 320 characters.
 */
export function isEmailText(text: string): boolean {
  return text.length <= MAX_EMAIL_LENGTH && text.isWellFormed() && !CONTROL.test(text);
}

/**
 * An email address: trimmed of spaces, one @, no spaces or control characters (a trailing line feed
 * included: it is refused, not trimmed), at most 320 characters.
 */
export function requireEmail(raw: string, field = "email"): string {
  const email = raw.trim();
  if (!EMAIL.test(email) || !isEmailText(raw)) throw invalidArgument(field, `${field} must be an email address`);
  return email;
}

export function toAccount(account: Pick<AccountRow, "id" | "email" | "name" | "create_time">): Account {
  return create(AccountSchema, { id: account.id, email: account.email, name: account.name, createTime: timestampFromDate(account.create_time) });
}

export function toMembership(member: MemberRow): Membership {
  return create(MembershipSchema, {
    organizationId: member.organization_id,
    organizationName: member.organization_name,
    account: toAccount({ id: member.id, email: member.email, name: member.name, create_time: member.account_create_time }),
    role: ROLES.proto(member.role),
    createTime: timestampFromDate(member.create_time),
  });
}
