import { Code, type ConnectError, createRouterTransport } from "@connectrpc/connect";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDatabase } from "../../src/data/db/connection.ts";
import { testDatabase, testDatabaseUrl } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";
import { allClients, PEER_HEADER, peopleHarness, Role } from "../support/people.ts";
import { until } from "../support/wait.ts";

/**
 * The services' pool as small as a test can make it hurt (4 connections, a connection waited for 2 s
 * at most), and the burst's account counter row held by another transaction: sign-ins that take a
 * pool connection wait on that row for as long as the test holds it, as 1,000 of them did on one
 * account's row while every other caller got "the database is unavailable".
 */
let db: Awaited<ReturnType<typeof connectDatabase>>;
let locker: Awaited<ReturnType<typeof testDatabase>>;
let harness: ReturnType<typeof peopleHarness>;

beforeAll(async () => {
  db = await connectDatabase(await testDatabaseUrl(), { max: 4, connectTimeoutMs: 2000 });
  locker = await testDatabase();
  harness = peopleHarness(testDeps(db, { SIGN_IN_CONCURRENCY: "2", SIGN_IN_QUEUE: "20" }));
});
afterAll(() => db.destroy());

/** Locks other transactions wait for (the row's first waiter waits on its holder, the rest on the row). */
async function lockWaiters(): Promise<number> {
  const { rows } = await sql<{
    n: string;
  }>`select count(*) as n from pg_locks where not granted and pid in (select pid from pg_stat_activity where datname = current_database())`.execute(locker);
  return Number(rows[0]!.n);
}

describe("a sign-in burst", () => {
  it("holds SIGN_IN_CONCURRENCY pool connections at most: another organization's calls all succeed, past SIGN_IN_QUEUE sign-ins are refused at once", async () => {
    const victimOrg = (await harness.operator.workspaces.createOrganization({ name: "Burst target" })).organization!.id;
    const victim = await harness.person(victimOrg, Role.MEMBER);
    const otherOrg = (await harness.operator.workspaces.createOrganization({ name: "Bystander" })).organization!.id;
    const bystander = await harness.person(otherOrg, Role.ADMIN);
    const { invitationToken } = await harness.operator.members.createInvitation({ organizationId: otherOrg, email: "late@example.com", role: Role.MEMBER });

    const subject = `account:${victim.email}`;
    await locker
      .insertInto("sign_in_failures")
      .values({ subject, failures: 0, window_start: new Date() })
      .onConflict((oc) => oc.doNothing())
      .execute();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const holding = locker.transaction().execute(async (trx) => {
      await trx.selectFrom("sign_in_failures").select("subject").where("subject", "=", subject).forUpdate().execute();
      locked();
      await released;
    });
    // The row is held before the first sign-in reaches it (one that came first would end as a wrong password).
    await lockTaken;

    // 50 wrong passwords from 10 addresses, all at once.
    const settled: ConnectError[] = [];
    const client = allClients(createRouterTransport(harness.routes));
    const burst = Array.from({ length: 50 }, (_, index) =>
      connectErrorOf(
        client.accounts.signIn({ email: victim.email, password: "wrong password!" }, { headers: { [PEER_HEADER]: `198.51.100.${index % 10}` } }),
      ).then((error) => settled.push(error)),
    );
    try {
      await until(async () => (await lockWaiters()) >= 2);
      // 2 hold their places, 20 wait for one, the other 28 are refused without a connection (nothing else can end while the row is held).
      await until(() => settled.length >= 28);
      expect(settled.map((error) => [Code[error.code], reasonOf(error)])).toEqual(
        Array.from({ length: 28 }, () => ["ResourceExhausted", "too_many_sign_in_attempts"]),
      );
      // Come back in a second, in the detail and as the header client libraries honour.
      expect(settled.map((error) => [errorInfoOf(error)?.metadata.retryAfterSeconds, error.metadata.get("retry-after")])).toEqual(
        Array.from({ length: 28 }, () => ["1", "1"]),
      );
      // AcceptInvitation is anonymous too: refused at once while the queue is full.
      const invitation = await connectErrorOf(
        harness.anonymous.accounts.acceptInvitation({ invitationToken, name: "Late", password: "correct horse battery" }),
      );
      expect([Code[invitation.code], reasonOf(invitation)]).toEqual(["ResourceExhausted", "too_many_sign_in_attempts"]);

      // Meanwhile another organization's person and the operator are served, every call.
      const others = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          index % 2 === 0
            ? bystander.clients.workspaces.listWorkspaces({ organizationId: otherOrg, pageSize: 10 })
            : harness.operator.workspaces.getOrganization({ organizationId: otherOrg }),
        ),
      );
      expect(others.filter((outcome) => outcome.status === "rejected")).toEqual([]);
    } finally {
      release();
      await holding;
    }
    // The 22 let through then end as wrong passwords or at the account's limit.
    await Promise.all(burst);
    expect(settled.slice(28).every((error) => ["sign_in_failed", "too_many_sign_in_attempts"].includes(reasonOf(error) ?? ""))).toBe(true);
  });
});
