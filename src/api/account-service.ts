import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { AccountService } from "../../gen/docpipe/v1/account_service_pb.js";
import { type Caller, callerKey, peerAddressKey } from "../platform/auth/caller.ts";
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, verifyPassword } from "../platform/auth/passwords.ts";
import { isSecretToken, newSecretToken } from "../platform/auth/secrets.ts";
import { clearedSessionCookie, sessionCookie } from "../platform/auth/session-cookie.ts";
import { inTransaction } from "../data/db/transaction.ts";
import { newId } from "../platform/ids.ts";
import { keyDigest } from "../platform/keys/key-value.ts";
import { type AccountRow, findAccount, findAccountByEmail, insertAccount } from "../data/repositories/accounts.ts";
import { insertAuditEvent } from "../data/repositories/audit-events.ts";
import { takeInvitation } from "../data/repositories/invitations.ts";
import { accountMemberships, findMember, insertMembership } from "../data/repositories/memberships.ts";
import { deleteAccountSessions, deleteSession, insertSession } from "../data/repositories/sessions.ts";
import { clearSignInFailures, releaseSignInAttempt, reserveSignInAttempt } from "../data/repositories/sign-in-failures.ts";
import { isEmailText, requireEmail, toAccount, toMembership } from "./accounts.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, serviceError } from "./errors.ts";
import { requireName } from "./names.ts";
import type { AnonymousGate } from "./anonymous-gate.ts";

/** Failed sign-ins are counted over this window, per account and per client address. */
const SIGN_IN_WINDOW_MS = 15 * 60_000;

/** A new password: MIN..MAX characters. */
function requirePassword(password: string): string {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw invalidArgument("password", `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
  return password;
}

/** The caller of an RPC the table lets only a signed-in person make. */
function signedIn(context: HandlerContext): Extract<Caller, { kind: "account" }> {
  const caller = context.values.get(callerKey);
  if (caller?.kind !== "account") throw serviceError(Code.Unauthenticated, "authentication_required", "sign in first");
  return caller;
}

export interface Sessions {
  /** Starts a session for the account and sets its cookie on the response. */
  start(account: AccountRow, context: HandlerContext): Promise<void>;
  /** Starts a session for the account, signing in from `address`; the Set-Cookie value that carries it. */
  open(account: AccountRow, address: string, secure: boolean): Promise<string>;
}

/** Sessions: a random token in an HttpOnly cookie; its SHA-256 in the database. */
export function createSessions(deps: ServiceDeps): Sessions {
  const { db, config } = deps;
  const open: Sessions["open"] = async (account, address, secure) => {
    const token = newSecretToken();
    const now = deps.now();
    const maxAgeSeconds = config.sessionMaxHours * 3600;
    await insertSession(db, {
      id: newId(),
      digest: keyDigest(token),
      account_id: account.id,
      create_time: now,
      last_seen_time: now,
      expire_time: new Date(now.getTime() + maxAgeSeconds * 1000),
      address,
    });
    return sessionCookie(token, maxAgeSeconds, secure);
  };
  return {
    open,
    async start(account, context) {
      const cookie = await open(account, context.values.get(peerAddressKey), secureCookie(config.sessionCookieSecure, context));
      context.responseHeader.append("set-cookie", cookie);
    },
  };
}

function secureCookie(configured: boolean, context: HandlerContext): boolean {
  return configured || context.url.startsWith("https:");
}

/** The refusal of an anonymous RPC when SIGN_IN_QUEUE calls wait already. */
function signInsBusy(): Error {
  return serviceError(Code.ResourceExhausted, "too_many_sign_in_attempts", "too many sign-ins are in progress; retry in a moment", {
    retryAfterSeconds: "1",
  });
}

export function createAccountService(
  deps: ServiceDeps,
  sessions: Sessions,
  caches: Pick<ServiceCaches, "sessions">,
  anonymous: AnonymousGate,
): ServiceImpl<typeof AccountService> {
  const { db, config } = deps;

  async function auditSignIn(account: { id: string; name: string }, outcome: string, address: string, action = "sign_in"): Promise<void> {
    await insertAuditEvent(db, {
      id: newId(),
      organization_id: null,
      time: deps.now(),
      actor_kind: "account",
      actor_id: account.id,
      actor_name: account.name,
      action,
      resource_type: "account",
      resource_id: account.id,
      address,
      outcome,
    });
  }

  /** SignIn past its checks, in its place at the anonymous gate. */
  async function signIn(email: string, password: string, context: HandlerContext) {
    const address = context.values.get(peerAddressKey);
    // The account's subject first, always: attempts lock their subjects in this order.
    const [accountSubject, addressSubject] = [`account:${email}`, `address:${address}`];
    const now = deps.now();
    const windowStart = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
    // Counted before the password is checked, so guesses sent together cannot all pass the limit.
    const subjects = [
      { subject: accountSubject, limit: config.signInFailuresPerAccount },
      { subject: addressSubject, limit: config.signInFailuresPerAddress },
    ];
    if (!(await reserveSignInAttempt(db, subjects, now, windowStart))) {
      throw serviceError(Code.ResourceExhausted, "too_many_sign_in_attempts", "too many failed sign-ins; try again in 15 minutes", {
        retryAfterSeconds: String(SIGN_IN_WINDOW_MS / 1000),
      });
    }
    let account: AccountRow | undefined;
    let verified: boolean;
    try {
      account = email === "" ? undefined : await findAccountByEmail(db, email);
      verified = await verifyPassword(account?.password_hash ?? null, password.slice(0, MAX_PASSWORD_LENGTH));
    } catch (error) {
      // Not a wrong password: the attempt is given back.
      await Promise.all([releaseSignInAttempt(db, accountSubject), releaseSignInAttempt(db, addressSubject)]).catch(() => {});
      throw error;
    }
    if (!verified || account === undefined) {
      if (account !== undefined) await auditSignIn({ id: account.id, name: account.email }, "sign_in_failed", address);
      throw serviceError(Code.Unauthenticated, "sign_in_failed", "the email or password is wrong");
    }
    await clearSignInFailures(db, accountSubject);
    await releaseSignInAttempt(db, addressSubject);
    await sessions.start(account, context);
    await auditSignIn({ id: account.id, name: account.email }, "ok", address);
    return { account: toAccount(account) };
  }

  return {
    async signIn(request, context) {
      // Counted under the email as stored: one the database would change is no account's. Checked
      // before trimming: a trailing line feed is a control character, refused, not trimmed away.
      if (!isEmailText(request.email)) throw invalidArgument("email", "email must be an email address");
      const email = request.email.trim().toLowerCase();
      return anonymous.run(() => signIn(email, request.password, context), signInsBusy);
    },

    async signOut(_request, context) {
      const caller = signedIn(context);
      await deleteSession(db, caller.sessionId);
      caches.sessions.clear();
      context.responseHeader.append("set-cookie", clearedSessionCookie(secureCookie(config.sessionCookieSecure, context)));
      await auditSignIn(caller, "ok", context.values.get(peerAddressKey), "sign_out");
      return {};
    },

    async signOutEverywhere(_request, context) {
      const caller = signedIn(context);
      const endedSessions = await deleteAccountSessions(db, caller.id);
      caches.sessions.clear();
      context.responseHeader.append("set-cookie", clearedSessionCookie(secureCookie(config.sessionCookieSecure, context)));
      await auditSignIn(caller, "ok", context.values.get(peerAddressKey), "sign_out_everywhere");
      return { endedSessions };
    },

    async getCurrentAccount(_request, context) {
      const caller = signedIn(context);
      const account = await findAccount(db, caller.id);
      if (account === undefined) throw serviceError(Code.Unauthenticated, "session_expired", "the account no longer exists");
      return { account: toAccount(account), memberships: (await accountMemberships(db, caller.id)).map(toMembership) };
    },

    async acceptInvitation(request, context) {
      if (!isSecretToken(request.invitationToken)) throw invitationInvalid();
      // Anyone holding a link may call it: it waits at the anonymous gate, apart from the shared pool.
      return anonymous.run(async () => {
        const caller = context.values.get(callerKey);
        const now = deps.now();
        const joined = await inTransaction(db, async (trx) => {
          const invitation = await takeInvitation(trx, keyDigest(request.invitationToken), now);
          if (invitation === undefined) throw invitationInvalid();
          let account: AccountRow | undefined;
          if (caller?.kind === "account") {
            account = await findAccount(trx, caller.id);
            // Refused inside the transaction: the link stays usable by the person it was made for.
            if (account !== undefined && invitation.email !== "" && invitation.email.toLowerCase() !== account.email.toLowerCase()) {
              throw serviceError(
                Code.PermissionDenied,
                "invitation_for_another_email",
                "this invitation is for another email address: sign out and open the link again, or ask for one of your own",
              );
            }
          } else {
            const name = requireName("name", request.name);
            const password = requirePassword(request.password);
            const email = requireEmail(invitation.email === "" ? request.email : invitation.email);
            if ((await findAccountByEmail(trx, email)) !== undefined) {
              throw serviceError(Code.FailedPrecondition, "sign_in_required", "an account with this email exists: sign in, then open the link again");
            }
            account = await insertAccount(trx, { id: newId(), email, name, password_hash: await hashPassword(password), create_time: now });
          }
          if (account === undefined) throw invitationInvalid();
          // A member's role changes through UpdateMemberRole (with its owner rules), never through a link.
          if (
            !(await insertMembership(trx, { organization_id: invitation.organization_id, account_id: account.id, role: invitation.role, create_time: now }))
          ) {
            throw serviceError(Code.FailedPrecondition, "already_member", "you are a member of this organization already; an admin changes roles");
          }
          return { account, member: (await findMember(trx, invitation.organization_id, account.id))! };
        });
        // A signed-in person's session gains the organization's role at once.
        caches.sessions.clear();
        if (caller?.kind !== "account") await sessions.start(joined.account, context);
        await insertAuditEvent(db, {
          id: newId(),
          organization_id: joined.member.organization_id,
          time: now,
          actor_kind: "account",
          actor_id: joined.account.id,
          actor_name: joined.account.email,
          action: "docpipe.v1.AccountService/AcceptInvitation",
          resource_type: "member",
          resource_id: joined.account.id,
          address: context.values.get(peerAddressKey),
          outcome: "ok",
        });
        return { membership: toMembership(joined.member) };
      }, signInsBusy);
    },
  };
}

function invitationInvalid() {
  return serviceError(Code.NotFound, "invitation_not_found", "the invitation link is not valid: it was used, withdrawn or has expired");
}
