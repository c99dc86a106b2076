import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createRouterTransport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { testDatabase } from "../support/database.ts";
import { createActivePipe, startEdge, type EdgeHarness } from "../support/edge.ts";
import { testDeps } from "../support/deps.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";
import { allClients, PEER_HEADER, peopleHarness, Role, sessionHeaders, sessionTokenFrom } from "../support/people.ts";

/** A clock the test moves. */
function clock() {
  let now = Date.now();
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

async function failure(call: Promise<unknown>): Promise<[string, string | undefined]> {
  const error = await connectErrorOf(call);
  return [Code[error.code], reasonOf(error)];
}

let deps: ServiceDeps;
let time: ReturnType<typeof clock>;
let harness: ReturnType<typeof peopleHarness>;
let organizationId: string;

beforeAll(async () => {
  time = clock();
  deps = testDeps(await testDatabase(), { SESSION_IDLE_MINUTES: "30", SESSION_MAX_HOURS: "2", SIGN_IN_FAILURES_PER_ACCOUNT: "3" }, time.now);
  harness = peopleHarness(deps);
  organizationId = (await harness.operator.workspaces.createOrganization({ name: "People" })).organization!.id;
});

/** Signs in; returns the Set-Cookie header and the session token. */
async function signIn(email: string, password: string, address = "192.0.2.10", routes = harness.routes) {
  let setCookie: string | null = null;
  await allClients(createRouterTransport(routes)).accounts.signIn(
    { email, password },
    { headers: { [PEER_HEADER]: address }, onHeader: (header) => (setCookie = header.get("set-cookie")) },
  );
  return { setCookie: setCookie as string | null, token: sessionTokenFrom(setCookie)! };
}

describe("signing in and out", () => {
  // The in-memory transport's URL is https://in-memory, so the cookie carries Secure, as it does behind HTTPS.
  it("a right email and password start a session: an HttpOnly, SameSite=Strict, Secure cookie whose token is stored only as a digest", async () => {
    const person = await harness.person(organizationId, Role.MEMBER);
    const { setCookie, token } = await signIn(person.email.toUpperCase(), person.password);
    expect(setCookie).toMatch(/^docpipe_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=7200; HttpOnly; SameSite=Strict; Secure$/);
    const me = await harness.as(sessionHeaders(token)).accounts.getCurrentAccount({});
    expect(me.account!.email).toBe(person.email);
    expect(me.memberships.map((membership) => [membership.organizationId, membership.role])).toEqual([[organizationId, Role.MEMBER]]);
    const stored = await deps.db.selectFrom("sessions").select("digest").where("account_id", "=", person.accountId).execute();
    expect(stored.every((row) => !row.digest.toString("utf8").includes(token) && row.digest.length === 32)).toBe(true);
  });

  it("a wrong password or an unknown email: Unauthenticated sign_in_failed alike", async () => {
    const person = await harness.person(organizationId, Role.VIEWER);
    expect(await failure(harness.anonymous.accounts.signIn({ email: person.email, password: "wrong password!" }))).toEqual([
      "Unauthenticated",
      "sign_in_failed",
    ]);
    expect(await failure(harness.anonymous.accounts.signIn({ email: "nobody@example.com", password: "wrong password!" }))).toEqual([
      "Unauthenticated",
      "sign_in_failed",
    ]);
  });

  it("past SIGN_IN_FAILURES_PER_ACCOUNT failures even the right password is refused: ResourceExhausted too_many_sign_in_attempts", async () => {
    const person = await harness.person(organizationId, Role.VIEWER);
    for (let i = 0; i < 3; i++) await connectErrorOf(signIn(person.email, "not the password", `198.51.100.${i}`));
    const refused = await connectErrorOf(signIn(person.email, person.password, "198.51.100.99"));
    expect([Code[refused.code], reasonOf(refused)]).toEqual(["ResourceExhausted", "too_many_sign_in_attempts"]);
    // The window's 15 minutes, in the detail and as the header client libraries honour.
    expect([errorInfoOf(refused)?.metadata.retryAfterSeconds, refused.metadata.get("retry-after")]).toEqual(["900", "900"]);
    // Another person from the same addresses is not locked out by them.
    const other = await harness.person(organizationId, Role.VIEWER);
    expect((await signIn(other.email, other.password, "198.51.100.0")).token).toBeDefined();
  });

  it("per client address too: SIGN_IN_FAILURES_PER_ADDRESS failures over any accounts lock that address out", async () => {
    const strict = peopleHarness(testDeps(deps.db, { SIGN_IN_FAILURES_PER_ADDRESS: "2" }, time.now));
    const person = await strict.person(organizationId, Role.VIEWER);
    await connectErrorOf(signIn("a@example.com", "x", "203.0.113.7", strict.routes));
    await connectErrorOf(signIn("b@example.com", "x", "203.0.113.7", strict.routes));
    expect(await failure(signIn(person.email, person.password, "203.0.113.7", strict.routes))).toEqual(["ResourceExhausted", "too_many_sign_in_attempts"]);
    expect((await signIn(person.email, person.password, "203.0.113.8", strict.routes)).token).toBeDefined();
  });

  it("guesses sent at once are counted before their passwords are checked: the limit holds, and the right password among them is refused", async () => {
    const person = await harness.person(organizationId, Role.VIEWER);
    const guesses = [...Array.from({ length: 15 }, (_, i) => `wrong guess ${i}`), person.password];
    const outcomes = await Promise.all(guesses.map((password) => failure(signIn(person.email, password, "198.51.100.200")).catch(() => ["ok"])));
    // SIGN_IN_FAILURES_PER_ACCOUNT is 3 here: three attempts reach the password check, whichever they are.
    const checked = outcomes.filter(([code]) => code !== "ResourceExhausted");
    expect(checked).toHaveLength(3);
    expect(outcomes.filter(([, reason]) => reason === "too_many_sign_in_attempts")).toHaveLength(13);
    expect(await failure(signIn(person.email, person.password, "198.51.100.201"))).toEqual(["ResourceExhausted", "too_many_sign_in_attempts"]);
  });

  it("an attempt refused by a limit is not counted: an address over its limit cannot lock out the accounts it names", async () => {
    const strict = peopleHarness(testDeps(deps.db, { SIGN_IN_FAILURES_PER_ADDRESS: "2" }, time.now));
    const victim = await strict.person(organizationId, Role.VIEWER);
    for (const email of ["made-up-1@example.com", "made-up-2@example.com"]) await connectErrorOf(signIn(email, "x", "203.0.113.30", strict.routes));
    for (let i = 0; i < 5; i++) {
      expect(await failure(signIn(victim.email, "a guess", "203.0.113.30", strict.routes))).toEqual(["ResourceExhausted", "too_many_sign_in_attempts"]);
    }
    // Counted, those five refusals locked the victim's account (SIGN_IN_FAILURES_PER_ACCOUNT is 5 in this harness).
    expect((await signIn(victim.email, victim.password, "203.0.113.31", strict.routes)).token).toBeDefined();
    // Sign-ins that succeed give their attempt back: one address's people are not locked out by signing in.
    for (let i = 0; i < 4; i++) expect((await signIn(victim.email, victim.password, "203.0.113.32", strict.routes)).token).toBeDefined();
  });

  it("an email the database would keep otherwise (a NUL, a control character) or over 320 characters is InvalidArgument before anything is counted", async () => {
    const person = await harness.person(organizationId, Role.VIEWER);
    const [local, domain] = person.email.split("@");
    // A trailing line feed or a leading tab is a control character too: refused, not trimmed away and counted.
    for (const email of [`${local}\u0000@${domain}`, `${local}\u0007@${domain}`, `${"a".repeat(320)}@${domain}`, `${person.email}\n`, `\t${person.email}`]) {
      expect(await failure(signIn(email, person.password, "198.51.100.210"))).toEqual(["InvalidArgument", "invalid_argument"]);
    }
    // Before, a NUL was dropped as the failure was stored but not as it was counted: the account's limit never applied.
    const counted = await deps.db.selectFrom("sign_in_failures").select("subject").where("subject", "like", `account:${local}%`).execute();
    expect(counted).toEqual([]);
    for (const email of [`new\u0000@${domain}`, `new@${domain}\n`]) {
      expect(await failure(harness.operator.members.createInvitation({ organizationId, email, role: Role.VIEWER }))).toEqual([
        "InvalidArgument",
        "invalid_argument",
      ]);
    }
  });

  it("sign out ends this session only; sign out everywhere ends them all", async () => {
    const person = await harness.person(organizationId, Role.MEMBER);
    const first = await signIn(person.email, person.password);
    const second = await signIn(person.email, person.password);
    let cleared: string | null = null;
    await harness.as(sessionHeaders(first.token)).accounts.signOut({}, { onHeader: (header) => (cleared = header.get("set-cookie")) });
    expect(cleared).toMatch(/^docpipe_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict; Secure$/);
    expect(await failure(harness.as(sessionHeaders(first.token)).pipes.listPipes({ organizationId }))).toEqual(["Unauthenticated", "session_expired"]);
    expect((await harness.as(sessionHeaders(second.token)).pipes.listPipes({ organizationId })).pipes).toBeDefined();
    const { endedSessions } = await harness.as(sessionHeaders(second.token)).accounts.signOutEverywhere({});
    expect(endedSessions).toBe(2); // the second and the one AcceptInvitation started
    expect(await failure(person.clients.pipes.listPipes({ organizationId }))).toEqual(["Unauthenticated", "session_expired"]);
  });

  it("a session ends after SESSION_IDLE_MINUTES without a call, and SESSION_MAX_HOURS after sign-in however active", async () => {
    const person = await harness.person(organizationId, Role.MEMBER);
    const idle = await signIn(person.email, person.password);
    const active = await signIn(person.email, person.password);
    const use = (token: string) => harness.as(sessionHeaders(token)).pipes.listPipes({ organizationId });
    for (let minutes = 20; minutes <= 100; minutes += 20) {
      time.advance(20 * 60_000);
      await use(active.token);
    }
    expect(await failure(use(idle.token))).toEqual(["Unauthenticated", "session_expired"]);
    time.advance(25 * 60_000); // 2 h 5 min after sign-in, 25 min after its last call
    expect(await failure(use(active.token))).toEqual(["Unauthenticated", "session_expired"]);
  });

  it("a call with the session cookie but without the console's CSRF header is refused: Unauthenticated csrf_header_missing", async () => {
    const person = await harness.person(organizationId, Role.OWNER);
    const forged = harness.as({ cookie: `docpipe_session=${person.cookie}` });
    expect(await failure(forged.keys.createKey({ organizationId, name: "forged" }))).toEqual(["Unauthenticated", "csrf_header_missing"]);
  });

  it("the CSRF header must say 1, as documented: X-Docpipe-Console: 0 is refused, csrf_header_missing", async () => {
    const person = await harness.person(organizationId, Role.OWNER);
    for (const value of ["0", "", "true"]) {
      const other = harness.as({ cookie: `docpipe_session=${person.cookie}`, "x-docpipe-console": value });
      expect(await failure(other.keys.createKey({ organizationId, name: "other" }))).toEqual(["Unauthenticated", "csrf_header_missing"]);
    }
    const console = harness.as({ cookie: `docpipe_session=${person.cookie}`, "x-docpipe-console": "1" });
    expect((await console.keys.createKey({ organizationId, name: "console" })).key!.name).toBe("console");
  });

  it("a stale cookie does not stop a person from signing in again", async () => {
    const person = await harness.person(organizationId, Role.VIEWER);
    const stale = harness.as(sessionHeaders("A".repeat(43)));
    expect((await stale.accounts.signIn({ email: person.email, password: person.password })).account!.email).toBe(person.email);
  });
});

describe("members", () => {
  it("removing a member ends their open session at once", async () => {
    const person = await harness.person(organizationId, Role.MEMBER);
    expect((await person.clients.pipes.listPipes({ organizationId })).pipes).toBeDefined();
    await harness.operator.members.removeMember({ organizationId, accountId: person.accountId });
    expect(await failure(person.clients.pipes.listPipes({ organizationId }))).toEqual(["Unauthenticated", "session_expired"]);
  });

  it("a member whose role changes is held to the new role on their next call", async () => {
    const person = await harness.person(organizationId, Role.MEMBER);
    await person.clients.keys.createKey({ organizationId, name: "while a member" });
    await harness.operator.members.updateMemberRole({ organizationId, accountId: person.accountId, role: Role.VIEWER });
    expect(await failure(person.clients.keys.createKey({ organizationId, name: "as a viewer" }))).toEqual(["PermissionDenied", "permission_denied"]);
  });

  it("an admin cannot make owners; the last owner cannot step down", async () => {
    const { organization } = await harness.operator.workspaces.createOrganization({ name: "Owned" });
    const orgId = organization!.id;
    const owner = await harness.person(orgId, Role.OWNER);
    const admin = await harness.person(orgId, Role.ADMIN);
    expect(await failure(admin.clients.members.updateMemberRole({ organizationId: orgId, accountId: admin.accountId, role: Role.OWNER }))).toEqual([
      "PermissionDenied",
      "permission_denied",
    ]);
    expect(await failure(admin.clients.members.createInvitation({ organizationId: orgId, email: "x@example.com", role: Role.OWNER }))).toEqual([
      "PermissionDenied",
      "permission_denied",
    ]);
    expect(await failure(owner.clients.members.updateMemberRole({ organizationId: orgId, accountId: owner.accountId, role: Role.ADMIN }))).toEqual([
      "FailedPrecondition",
      "last_owner",
    ]);
    const { members } = await admin.clients.members.listMembers({ organizationId: orgId });
    expect(members.map((member) => member.role).sort()).toEqual([Role.OWNER, Role.ADMIN].sort());
  });

  it("a member opening a link to their own organization keeps their role: FailedPrecondition already_member, and the link stays usable", async () => {
    const { organization } = await harness.operator.workspaces.createOrganization({ name: "Kept" });
    const orgId = organization!.id;
    const owner = await harness.person(orgId, Role.OWNER);
    const admin = await harness.person(orgId, Role.ADMIN);
    // An admin may not take the owner role away, so neither may a viewer's link the owner opens.
    const { invitationToken } = await admin.clients.members.createInvitation({ organizationId: orgId, email: "", role: Role.VIEWER });
    expect(await failure(owner.clients.accounts.acceptInvitation({ invitationToken }))).toEqual(["FailedPrecondition", "already_member"]);
    const { members } = await harness.operator.members.listMembers({ organizationId: orgId });
    expect(members.find((member) => member.account!.id === owner.accountId)!.role).toBe(Role.OWNER);
    const newcomer = await harness.anonymous.accounts.acceptInvitation({
      invitationToken,
      name: "New",
      password: "a long password",
      email: `${crypto.randomUUID()}@example.com`,
    });
    expect(newcomer.membership!.role).toBe(Role.VIEWER);
  });

  it("a link made for one email is refused to another signed-in person: PermissionDenied invitation_for_another_email, and it stays usable", async () => {
    const { organization } = await harness.operator.workspaces.createOrganization({ name: "Addressed" });
    const orgId = organization!.id;
    const elsewhere = await harness.person(organizationId, Role.VIEWER);
    const email = `${crypto.randomUUID()}@example.com`;
    const { invitationToken } = await harness.operator.members.createInvitation({ organizationId: orgId, email, role: Role.ADMIN });
    expect(await failure(elsewhere.clients.accounts.acceptInvitation({ invitationToken }))).toEqual(["PermissionDenied", "invitation_for_another_email"]);
    const { members } = await harness.operator.members.listMembers({ organizationId: orgId });
    expect(members).toEqual([]);
    const invited = await harness.anonymous.accounts.acceptInvitation({ invitationToken, name: "Invited", password: "a long password" });
    expect(invited.membership!.account!.email).toBe(email);
  });

  it("an invitation link works once", async () => {
    const { invitationToken } = await harness.operator.members.createInvitation({ organizationId, email: "once@example.com", role: Role.VIEWER });
    await harness.anonymous.accounts.acceptInvitation({ invitationToken, name: "Once", password: "a long password" });
    expect(await failure(harness.anonymous.accounts.acceptInvitation({ invitationToken, name: "Twice", password: "a long password" }))).toEqual([
      "NotFound",
      "invitation_not_found",
    ]);
  });
});

describe("service tokens", () => {
  it("are shown once, stored hashed, act with their role in their organization, record their last use and stop when deleted", async () => {
    const { serviceToken, tokenValue } = await harness.operator.serviceTokens.createServiceToken({ organizationId, name: "ci", role: Role.MEMBER });
    expect(tokenValue).toMatch(/^dpst_[0-9A-Za-z]{36}$/);
    expect(serviceToken!.hint).toBe(`dpst_…${tokenValue.slice(-4)}`);
    const ci = harness.as({ authorization: `Bearer ${tokenValue}` });
    const { pipe } = await ci.pipes.createPipe({ organizationId, name: "made by ci" });
    expect(pipe!.organizationId).toBe(organizationId);
    expect(await failure(ci.serviceTokens.listServiceTokens({ organizationId }))).toEqual(["PermissionDenied", "permission_denied"]);
    const listed = (await harness.operator.serviceTokens.listServiceTokens({ organizationId })).serviceTokens.find((token) => token.id === serviceToken!.id);
    expect(listed!.lastUsedTime).toBeDefined();
    const stored = await deps.db.selectFrom("service_tokens").selectAll().where("id", "=", serviceToken!.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(tokenValue);
    await harness.operator.serviceTokens.deleteServiceToken({ organizationId, serviceTokenId: serviceToken!.id });
    expect(await failure(ci.pipes.listPipes({ organizationId }))).toEqual(["Unauthenticated", "service_token_invalid"]);
  });

  it("past its expiry a token is refused: Unauthenticated service_token_expired; the owner role is not for tokens", async () => {
    const expireTime = timestampFromDate(new Date(time.now().getTime() + 60_000));
    const { tokenValue } = await harness.operator.serviceTokens.createServiceToken({ organizationId, name: "short", role: Role.VIEWER, expireTime });
    time.advance(61_000);
    expect(await failure(harness.as({ authorization: `Bearer ${tokenValue}` }).pipes.listPipes({ organizationId }))).toEqual([
      "Unauthenticated",
      "service_token_expired",
    ]);
    expect(await failure(harness.operator.serviceTokens.createServiceToken({ organizationId, name: "boss", role: Role.OWNER }))).toEqual([
      "InvalidArgument",
      "invalid_argument",
    ]);
  });
});

describe("the audit log", () => {
  it("records who changed what, from where, and every sign-in; filters by actor and resource", async () => {
    const { organization } = await harness.operator.workspaces.createOrganization({ name: "Audited" });
    const orgId = organization!.id;
    const admin = await harness.person(orgId, Role.ADMIN);
    const member = await harness.person(orgId, Role.MEMBER);
    await signIn(member.email, member.password, "192.0.2.77");
    await connectErrorOf(signIn(member.email, "wrong password", "192.0.2.78"));
    const { pipe } = await member.clients.pipes.createPipe({ organizationId: orgId, name: "audited pipe" });
    await member.clients.pipes.deletePipe({ organizationId: orgId, pipeId: pipe!.id });
    await admin.clients.members.removeMember({ organizationId: orgId, accountId: member.accountId });

    const { events } = await admin.clients.audit.listAuditEvents({ organizationId: orgId });
    const summary = events.map((event) => [event.actorName, event.action, event.resourceType, event.outcome]);
    expect(summary).toEqual(
      expect.arrayContaining([
        [member.email, "docpipe.v1.PipeService/CreatePipe", "pipe", "ok"],
        [member.email, "docpipe.v1.PipeService/DeletePipe", "pipe", "ok"],
        [admin.email, "docpipe.v1.MemberService/RemoveMember", "member", "ok"],
        [admin.email, "docpipe.v1.AccountService/AcceptInvitation", "member", "ok"],
      ]),
    );
    const pipeEvents = await admin.clients.audit.listAuditEvents({ organizationId: orgId, resourceId: pipe!.id });
    expect(pipeEvents.events.map((event) => event.action)).toEqual(["docpipe.v1.PipeService/DeletePipe", "docpipe.v1.PipeService/CreatePipe"]);
    // Sign-ins are listed while the person is a member; the removed member's are not the admin's to read any more.
    const adminEvents = await admin.clients.audit.listAuditEvents({ organizationId: orgId, actorId: admin.accountId });
    expect(adminEvents.events.every((event) => event.actorId === admin.accountId)).toBe(true);
    const signIns = await deps.db.selectFrom("audit_events").selectAll().where("actor_id", "=", member.accountId).where("action", "=", "sign_in").execute();
    expect(signIns.map((event) => [event.address, event.outcome]).sort()).toEqual([
      ["192.0.2.77", "ok"],
      ["192.0.2.78", "sign_in_failed"],
    ]);
    expect(await failure(member.clients.audit.listAuditEvents({ organizationId: orgId }))).toEqual(["Unauthenticated", "session_expired"]);
  });
});

describe("API keys limited to chosen pipes, at the edge", () => {
  let edge: EdgeHarness;
  beforeAll(async () => {
    edge = await startEdge();
  });
  afterAll(() => edge.close());

  const submit = (pipeId: string, keyValue: string) => {
    const body = new FormData();
    body.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    return fetch(`${edge.url}/pipes/${pipeId}/trigger`, { method: "POST", headers: { "x-api-key": keyValue }, body });
  };

  it("a key limited to one pipe gets the same 404 pipe_not_found on another pipe as on a missing one", async () => {
    const { organization } = await edge.clients.workspaces.createOrganization({ name: "Limited", plan: "advanced" });
    const orgId = organization!.id;
    const allowed = await createActivePipe(edge.clients, orgId);
    const other = await createActivePipe(edge.clients, orgId);
    const { key, keyValue } = await edge.clients.keys.createKey({ organizationId: orgId, name: "one pipe", pipeIds: [allowed] });
    expect(key!.pipeIds).toEqual([allowed]);
    expect((await submit(allowed, keyValue)).status).toBe(202);
    const refused = await submit(other, keyValue);
    const missing = await submit(crypto.randomUUID(), keyValue);
    expect(refused.status).toBe(404);
    const [refusedBody, missingBody] = [(await refused.json()) as Record<string, unknown>, (await missing.json()) as Record<string, unknown>];
    expect(refusedBody.code).toBe("pipe_not_found");
    expect({ ...refusedBody, instance: undefined, traceId: undefined }).toEqual({ ...missingBody, instance: undefined, traceId: undefined });
  });

  it("a key limited to a workspace reaches that workspace's pipes only; a limit naming another organization's pipe is InvalidArgument", async () => {
    const { organization } = await edge.clients.workspaces.createOrganization({ name: "Workspaces", plan: "advanced" });
    const orgId = organization!.id;
    const { workspace } = await edge.clients.workspaces.createWorkspace({ organizationId: orgId, name: "Team" });
    const inTeam = await createActivePipe(edge.clients, orgId, {}, workspace!.id);
    const inDefault = await createActivePipe(edge.clients, orgId);
    const { keyValue } = await edge.clients.keys.createKey({ organizationId: orgId, name: "team", workspaceIds: [workspace!.id] });
    const body = new FormData();
    body.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
    const accepted = await fetch(`${edge.url}/pipes/${inTeam}/trigger`, {
      method: "POST",
      headers: { "x-api-key": keyValue, "x-workspace-id": workspace!.id },
      body,
    });
    expect(accepted.status).toBe(202);
    const refused = await submit(inDefault, keyValue);
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([404, "pipe_not_found"]);
    const elsewhere = (await edge.clients.workspaces.createOrganization({ name: "Other" })).organization!.id;
    const foreign = await createActivePipe(edge.clients, elsewhere);
    // Another organization's pipe or workspace is NotFound, as a missing one is (and as CreatePipe answers).
    const error = await connectErrorOf(edge.clients.keys.createKey({ organizationId: orgId, name: "foreign", pipeIds: [foreign] }));
    expect([Code[error.code], reasonOf(error), error.rawMessage]).toEqual(["NotFound", "pipe_not_found", expect.stringContaining("pipe_ids")]);
    const { workspace: foreignWorkspace } = await edge.clients.workspaces.createWorkspace({ organizationId: elsewhere, name: "Theirs" });
    const workspaceError = await connectErrorOf(edge.clients.keys.createKey({ organizationId: orgId, name: "foreign", workspaceIds: [foreignWorkspace!.id] }));
    expect([Code[workspaceError.code], reasonOf(workspaceError), workspaceError.rawMessage]).toEqual([
      "NotFound",
      "workspace_not_found",
      expect.stringContaining("workspace_ids"),
    ]);
    const createPipe = await connectErrorOf(edge.clients.pipes.createPipe({ organizationId: orgId, workspaceId: foreignWorkspace!.id, name: "x" }));
    expect([Code[createPipe.code], reasonOf(createPipe)]).toEqual(["NotFound", "workspace_not_found"]);
  });
});
