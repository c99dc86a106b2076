import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type Invitation, InvitationSchema } from "../../gen/docpipe/v1/account_pb.js";
import type { MemberService } from "../../gen/docpipe/v1/member_service_pb.js";
import { callerKey, roleIn } from "../platform/auth/caller.ts";
import { roleAllows } from "../platform/auth/roles.ts";
import { newSecretToken } from "../platform/auth/secrets.ts";
import type { MemberRole } from "../platform/auth/roles.ts";
import { inTransaction } from "../data/db/transaction.ts";
import { newId } from "../platform/ids.ts";
import { keyDigest } from "../platform/keys/key-value.ts";
import { deleteInvitation, type InvitationRow, insertInvitation, listInvitations } from "../data/repositories/invitations.ts";
import { deleteMembership, findMember, listMembers, lockOwners, type MemberRow, setMemberRole } from "../data/repositories/memberships.ts";
import { deleteAccountSessions } from "../data/repositories/sessions.ts";
import { requireEmail, requireRole, ROLES, toMembership } from "./accounts.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { notFound, serviceError } from "./errors.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";

/** How long an invitation link works. */
const INVITATION_TTL_MS = 7 * 24 * 3600_000;

function toInvitation(invitation: InvitationRow): Invitation {
  return create(InvitationSchema, {
    id: invitation.id,
    organizationId: invitation.organization_id,
    email: invitation.email,
    role: ROLES.proto(invitation.role),
    createTime: timestampFromDate(invitation.create_time),
    expireTime: timestampFromDate(invitation.expire_time),
  });
}

/** Only an owner (or the operator) gives, takes or removes the owner role. */
function requireOwnerPowers(context: HandlerContext, organizationId: string, ...roles: MemberRole[]): void {
  if (!roles.includes("owner")) return;
  const caller = context.values.get(callerKey);
  const role = caller === undefined ? undefined : roleIn(caller, organizationId);
  if (role === undefined || !roleAllows(role, "owners.write")) {
    throw serviceError(Code.PermissionDenied, "permission_denied", "only an owner may give, take or remove the owner role");
  }
}

function lastOwner() {
  return serviceError(Code.FailedPrecondition, "last_owner", "an organization keeps at least one owner: make another owner first");
}

export function createMemberService(deps: ServiceDeps, caches: Pick<ServiceCaches, "sessions">): ServiceImpl<typeof MemberService> {
  const { db, pageTokens } = deps;

  /** The member named, or NotFound (member_not_found). */
  async function member(organizationId: string, accountId: string): Promise<MemberRow> {
    const found = await findMember(db, organizationId, accountId);
    if (found === undefined) throw notFound("member");
    return found;
  }

  return {
    async listMembers(request) {
      const { organizationId } = request;
      const page = await listPage(
        pageTokens,
        request,
        { list: "members", organizationId },
        (afterId, limit) => listMembers(db, { organizationId, afterId, limit }),
        () => requireOrganization(db, organizationId),
      );
      return { members: page.items.map(toMembership), nextPageToken: page.nextPageToken };
    },

    async updateMemberRole(request, context) {
      const role = requireRole(request.role);
      const current = await member(request.organizationId, request.accountId);
      requireOwnerPowers(context, request.organizationId, role, current.role);
      await inTransaction(db, async (trx) => {
        const owners = await lockOwners(trx, request.organizationId);
        if (current.role === "owner" && role !== "owner" && owners.length <= 1) throw lastOwner();
        await setMemberRole(trx, request.organizationId, request.accountId, role);
      });
      caches.sessions.clear();
      return { member: toMembership(await member(request.organizationId, request.accountId)) };
    },

    async removeMember(request, context) {
      const current = await member(request.organizationId, request.accountId);
      requireOwnerPowers(context, request.organizationId, current.role);
      await inTransaction(db, async (trx) => {
        const owners = await lockOwners(trx, request.organizationId);
        if (current.role === "owner" && owners.length <= 1) throw lastOwner();
        await deleteMembership(trx, request.organizationId, request.accountId);
        // Their open sessions end now, not at their expiry: what they had open in the console stops working.
        await deleteAccountSessions(trx, request.accountId);
      });
      caches.sessions.clear();
      return {};
    },

    async createInvitation(request, context) {
      const email = request.email.trim() === "" ? "" : requireEmail(request.email);
      const role = requireRole(request.role);
      requireOwnerPowers(context, request.organizationId, role);
      await requireOrganization(db, request.organizationId);
      const token = newSecretToken();
      const now = deps.now();
      const invitation = await insertInvitation(db, {
        id: newId(),
        organization_id: request.organizationId,
        digest: keyDigest(token),
        email,
        role,
        create_time: now,
        expire_time: new Date(now.getTime() + INVITATION_TTL_MS),
      });
      return { invitation: toInvitation(invitation), invitationToken: token };
    },

    async listInvitations(request) {
      const { organizationId } = request;
      const now = deps.now();
      const page = await listPage(
        pageTokens,
        request,
        { list: "invitations", organizationId },
        (afterId, limit) => listInvitations(db, { organizationId, now, afterId, limit }),
        () => requireOrganization(db, organizationId),
      );
      return { invitations: page.items.map(toInvitation), nextPageToken: page.nextPageToken };
    },

    async deleteInvitation(request) {
      if (!(await deleteInvitation(db, request.organizationId, request.invitationId))) throw notFound("invitation");
      return {};
    },
  };
}
