import { once } from "node:events";
import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { connectNodeAdapter, createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiKeyState } from "../../gen/docpipe/v1/key_pb.js";
import { GetKeyResponseSchema, KeyService, ListKeysResponseSchema } from "../../gen/docpipe/v1/key_service_pb.js";
import { TriggerService } from "../../gen/docpipe/v1/trigger_service_pb.js";
import { WorkspaceService } from "../../gen/docpipe/v1/workspace_service_pb.js";
import type { Database } from "../../src/data/db/schema.ts";
import { isWellFormedKeyValue, keyDigest } from "../../src/platform/keys/key-value.ts";
import type { ServiceDeps } from "../../src/api/deps.ts";
import { errorInfoOf } from "../../src/platform/error-info.ts";
import { TRIGGER_PERMISSION } from "../../src/platform/keys/permissions.ts";

/** The default KEY_CACHE_MS. */
const KEY_CACHE_MS = 1000;
import { inMemoryClients, inProcessRoutes } from "../support/services.ts";
import { testDatabase } from "../support/database.ts";
import { testDeps } from "../support/deps.ts";
import { connectErrorOf, reasonOf } from "../support/errors.ts";
import { sleep } from "../support/wait.ts";

const MINUTE = 60_000;
const MISSING_ID = "01890000-0000-7000-8000-000000000000";

/** The Connect code and ErrorInfo reason a call failed with. */
async function failure(call: Promise<unknown>): Promise<{ code: string; reason: string | undefined }> {
  const error = await connectErrorOf(call);
  return { code: Code[error.code], reason: reasonOf(error) };
}

/** Key management and key authentication (TriggerService) on one client, as the tests use them together. */
function clients(transport: Transport) {
  return {
    keys: { ...createClient(KeyService, transport), ...createClient(TriggerService, transport) },
    workspaces: createClient(WorkspaceService, transport),
  };
}

function inMemory(deps: ServiceDeps) {
  const { keys, trigger, workspaces } = inMemoryClients(deps);
  return { keys: { ...keys, ...trigger }, workspaces };
}

/** Every RPC naming the key, as `organizationId`, is NotFound, and the organization lists no key. */
async function expectEveryKeyRpcNotFound(organizationId: string, keyId: string) {
  const notFound = { code: "NotFound", reason: "api_key_not_found" };
  expect(await failure(client.keys.getKey({ organizationId, keyId }))).toEqual(notFound);
  expect(await failure(client.keys.deactivateKey({ organizationId, keyId }))).toEqual(notFound);
  expect(await failure(client.keys.reactivateKey({ organizationId, keyId }))).toEqual(notFound);
  expect(await failure(client.keys.deleteKey({ organizationId, keyId }))).toEqual(notFound);
  expect((await client.keys.listKeys({ organizationId })).keys).toEqual([]);
}

/** A clock the test moves by hand. */
function manualClock(start = new Date("2030-01-01T00:00:00Z")) {
  const clock = { time: start, now: () => clock.time, advance: (ms: number) => (clock.time = new Date(clock.time.getTime() + ms)) };
  return clock;
}

let db: Kysely<Database>;
let client: ReturnType<typeof inMemory>;

beforeAll(async () => {
  db = await testDatabase();
  client = inMemory(testDeps(db));
});

async function newOrganization(api = client, plan = "") {
  const { organization } = await api.workspaces.createOrganization({ name: "Key test org", plan });
  return organization!.id;
}

async function newKey(api = client, organizationId?: string, expireTime?: Date) {
  const orgId = organizationId ?? (await newOrganization(api));
  const created = await api.keys.createKey({
    organizationId: orgId,
    name: "ci uploads",
    expireTime: expireTime && timestampFromDate(expireTime),
  });
  return { organizationId: orgId, keyId: created.key!.id, keyValue: created.keyValue, key: created.key! };
}

describe("CreateKey", () => {
  it("returns an active key and its value once, with the trigger permission and a hint", async () => {
    const { keyValue, key, organizationId } = await newKey();
    expect(isWellFormedKeyValue(keyValue)).toBe(true);
    expect(keyValue).toMatch(/^dp_/);
    expect(key).toMatchObject({
      organizationId,
      name: "ci uploads",
      state: ApiKeyState.ACTIVE,
      permissions: [TRIGGER_PERMISSION],
      hint: `dp_…${keyValue.slice(-4)}`,
    });
    expect(key.createTime).toBeDefined();
    expect(key.expireTime).toBeUndefined();
    expect(key.lastUsedTime).toBeUndefined();
  });

  it("stores only the SHA-256 digest of the value", async () => {
    const { keyId, keyValue } = await newKey();
    const row = await db.selectFrom("api_keys").selectAll().where("id", "=", keyId).executeTakeFirstOrThrow();
    expect(row.digest).toEqual(keyDigest(keyValue));
    expect(JSON.stringify(row)).not.toContain(keyValue.slice(3, -4));
  });

  it("uses the configured key prefix", async () => {
    const acme = inMemory(testDeps(db, { KEY_PREFIX: "acme" }));
    const { keyValue, key } = await newKey(acme);
    expect(keyValue).toMatch(/^acme_/);
    expect(key.hint).toBe(`acme_…${keyValue.slice(-4)}`);
  });

  it("trims the name", async () => {
    const organizationId = await newOrganization();
    const { key } = await client.keys.createKey({ organizationId, name: "  nightly import \n" });
    expect(key!.name).toBe("nightly import");
  });

  it("accepts a name of 200 characters", async () => {
    const organizationId = await newOrganization();
    const { key } = await client.keys.createKey({ organizationId, name: "é".repeat(200) });
    expect(key!.name).toBe("é".repeat(200));
  });

  it.each([
    ["empty", ""],
    ["blank", "   "],
    ["201 characters", "k".repeat(201)],
  ])("rejects a name that is %s with InvalidArgument naming the field", async (_, name) => {
    const organizationId = await newOrganization();
    const error = await connectErrorOf(client.keys.createKey({ organizationId, name }));
    expect(error.code).toBe(Code.InvalidArgument);
    expect(errorInfoOf(error)?.metadata).toEqual({ field: "name" });
  });

  it("keeps an expiration time in the future", async () => {
    const expireTime = new Date(Date.now() + 86_400_000);
    const { key } = await newKey(client, undefined, expireTime);
    expect(key.expireTime && Number(key.expireTime.seconds)).toBe(Math.floor(expireTime.getTime() / 1000));
    expect(key.state).toBe(ApiKeyState.ACTIVE);
  });

  it.each([
    ["in the past", -MINUTE],
    ["now", 0],
  ])("rejects an expiration time %s", async (_, offset) => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const organizationId = await newOrganization(api);
    const call = api.keys.createKey({ organizationId, name: "late", expireTime: timestampFromDate(new Date(clock.time.getTime() + offset)) });
    expect(await failure(call)).toEqual({ code: "InvalidArgument", reason: "invalid_argument" });
  });

  it("rejects an expiration time no date can hold (valid protobuf: any int64 of seconds)", async () => {
    const organizationId = await newOrganization(client);
    for (const seconds of [2n ** 62n, 253_402_300_800n]) {
      const call = client.keys.createKey({ organizationId, name: "far", expireTime: { seconds, nanos: 0 } });
      expect(await failure(call)).toEqual({ code: "InvalidArgument", reason: "invalid_argument" });
    }
  });

  it("is NotFound for an unknown or malformed organization id", async () => {
    expect(await failure(client.keys.createKey({ organizationId: MISSING_ID, name: "x" }))).toEqual({ code: "NotFound", reason: "organization_not_found" });
    expect(await failure(client.keys.createKey({ organizationId: "nope", name: "x" }))).toEqual({ code: "NotFound", reason: "organization_not_found" });
  });
});

describe("GetKey", () => {
  it("returns the key without its value or digest", async () => {
    const { organizationId, keyId, keyValue, key } = await newKey();
    const got = await client.keys.getKey({ organizationId, keyId });
    expect(got.key).toEqual(key);
    const wire = toJsonString(GetKeyResponseSchema, got);
    expect(wire).not.toContain(keyValue.slice(3, -4));
    expect(wire).not.toContain(keyDigest(keyValue).toString("base64"));
  });

  it("is NotFound for an unknown or malformed key id", async () => {
    const organizationId = await newOrganization();
    expect(await failure(client.keys.getKey({ organizationId, keyId: MISSING_ID }))).toEqual({ code: "NotFound", reason: "api_key_not_found" });
    expect(await failure(client.keys.getKey({ organizationId, keyId: "1; drop table api_keys" }))).toEqual({ code: "NotFound", reason: "api_key_not_found" });
  });
});

describe("ListKeys", () => {
  it("lists the organization's keys newest first, a page at a time", async () => {
    const organizationId = await newOrganization();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newKey(client, organizationId)).keyId);
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await client.keys.listKeys({ organizationId, pageSize: 2, pageToken });
      expect(page.keys.length).toBeLessThanOrEqual(2);
      seen.push(...page.keys.map((key) => key.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen).toEqual(ids.reverse());
  });

  it("filters by state: active, expired and deactivated", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const organizationId = await newOrganization(api);
    const active = await newKey(api, organizationId);
    const expiring = await newKey(api, organizationId, new Date(clock.time.getTime() + MINUTE));
    const deactivated = await newKey(api, organizationId);
    await api.keys.deactivateKey(deactivated);
    clock.advance(MINUTE);

    const idsIn = async (state: ApiKeyState) => (await api.keys.listKeys({ organizationId, state })).keys.map((key) => key.id);
    expect(await idsIn(ApiKeyState.ACTIVE)).toEqual([active.keyId]);
    expect(await idsIn(ApiKeyState.EXPIRED)).toEqual([expiring.keyId]);
    expect(await idsIn(ApiKeyState.DEACTIVATED)).toEqual([deactivated.keyId]);
    expect(await idsIn(ApiKeyState.UNSPECIFIED)).toEqual([deactivated.keyId, expiring.keyId, active.keyId]);
  });

  it("never shows a value", async () => {
    const { organizationId, keyValue } = await newKey();
    expect(toJsonString(ListKeysResponseSchema, await client.keys.listKeys({ organizationId }))).not.toContain(keyValue.slice(3, -4));
  });

  it("rejects a tampered page token, and one from another organization's list", async () => {
    const organizationId = await newOrganization();
    await newKey(client, organizationId);
    await newKey(client, organizationId);
    const { nextPageToken } = await client.keys.listKeys({ organizationId, pageSize: 1 });
    expect(nextPageToken).not.toBe("");
    const tampered = `${nextPageToken.slice(0, -2)}${nextPageToken.endsWith("AA") ? "BB" : "AA"}`;
    const invalid = { code: "InvalidArgument", reason: "page_token_invalid" };
    expect(await failure(client.keys.listKeys({ organizationId, pageToken: tampered }))).toEqual(invalid);
    expect(await failure(client.keys.listKeys({ organizationId, pageToken: "garbage" }))).toEqual(invalid);
    expect(await failure(client.keys.listKeys({ organizationId: await newOrganization(), pageToken: nextPageToken }))).toEqual(invalid);
    expect(await failure(client.keys.listKeys({ organizationId, state: ApiKeyState.ACTIVE, pageToken: nextPageToken }))).toEqual(invalid);
  });

  it("rejects a negative page size and an unknown state", async () => {
    const organizationId = await newOrganization();
    expect(await failure(client.keys.listKeys({ organizationId, pageSize: -1 }))).toEqual({ code: "InvalidArgument", reason: "invalid_argument" });
    expect(await failure(client.keys.listKeys({ organizationId, state: 42 as ApiKeyState }))).toEqual({ code: "InvalidArgument", reason: "invalid_argument" });
  });

  it("is NotFound for an unknown organization", async () => {
    expect(await failure(client.keys.listKeys({ organizationId: MISSING_ID }))).toEqual({ code: "NotFound", reason: "organization_not_found" });
  });
});

describe("the key state table", () => {
  it("active, created without an expiration date: authenticates", async () => {
    const { keyValue, organizationId, keyId } = await newKey();
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({ organizationId, keyId });
  });

  it("active, created before its expiration date: authenticates until the date, then is expired", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const { keyValue, organizationId, keyId } = await newKey(api, undefined, new Date(clock.time.getTime() + MINUTE));
    clock.advance(MINUTE - 1);
    expect(await api.keys.authenticateKey({ keyValue })).toMatchObject({ keyId });
    clock.advance(1);
    expect(await failure(api.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_expired" });
    expect((await api.keys.getKey({ organizationId, keyId })).key!.state).toBe(ApiKeyState.EXPIRED);
  });

  it("active -> deactivate: deactivated, requests get Unauthenticated, the key is kept", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const { keyValue, organizationId, keyId } = await newKey(api);
    const { key } = await api.keys.deactivateKey({ organizationId, keyId });
    expect(key).toMatchObject({ state: ApiKeyState.DEACTIVATED, deactivateTime: timestampFromDate(clock.time) });
    expect(await failure(api.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_deactivated" });
    expect((await api.keys.getKey({ organizationId, keyId })).key).toEqual(key);
  });

  it("deactivated -> deactivate again: no change, the first deactivation time stays", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const { organizationId, keyId } = await newKey(api);
    const first = await api.keys.deactivateKey({ organizationId, keyId });
    clock.advance(MINUTE);
    expect(await api.keys.deactivateKey({ organizationId, keyId })).toEqual(first);
  });

  it("deactivated -> reactivate: active again, authenticates", async () => {
    const { keyValue, organizationId, keyId } = await newKey();
    await client.keys.deactivateKey({ organizationId, keyId });
    const { key } = await client.keys.reactivateKey({ organizationId, keyId });
    expect(key!.state).toBe(ApiKeyState.ACTIVE);
    expect(key!.deactivateTime).toBeUndefined();
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({ keyId });
  });

  it("active -> reactivate: no change", async () => {
    const { organizationId, keyId, key } = await newKey();
    expect((await client.keys.reactivateKey({ organizationId, keyId })).key).toEqual(key);
  });

  it("expired -> reactivate: stays expired; expired -> deactivate: deactivated", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const { keyValue, organizationId, keyId } = await newKey(api, undefined, new Date(clock.time.getTime() + MINUTE));
    clock.advance(MINUTE);
    expect((await api.keys.reactivateKey({ organizationId, keyId })).key!.state).toBe(ApiKeyState.EXPIRED);
    expect((await api.keys.deactivateKey({ organizationId, keyId })).key!.state).toBe(ApiKeyState.DEACTIVATED);
    expect(await failure(api.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_deactivated" });
  });

  it.each([
    ["active", false],
    ["deactivated", true],
  ])("%s -> delete: deleted for good, every later RPC is NotFound", async (_, deactivateFirst) => {
    const { keyValue, organizationId, keyId } = await newKey();
    if (deactivateFirst) await client.keys.deactivateKey({ organizationId, keyId });
    await client.keys.deleteKey({ organizationId, keyId });
    expect(await db.selectFrom("api_keys").select("id").where("id", "=", keyId).executeTakeFirst()).toBeUndefined();
    await expectEveryKeyRpcNotFound(organizationId, keyId);
    expect(await failure(client.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_invalid" });
  });
});

describe("AuthenticateKey", () => {
  it("is api_key_missing for an empty value", async () => {
    expect(await failure(client.keys.authenticateKey({ keyValue: "" }))).toEqual({ code: "Unauthenticated", reason: "api_key_missing" });
  });

  it("rejects malformed values and bad checksums as api_key_invalid without a database query", async () => {
    const noDatabase = new Proxy(
      {},
      {
        get: () => {
          throw new Error("the database must not be used");
        },
      },
    ) as Kysely<Database>;
    const api = inMemory({ ...testDeps(db), db: noDatabase });
    const { keyValue } = await newKey();
    const badChecksum = `${keyValue.slice(0, -1)}${keyValue.endsWith("0") ? "1" : "0"}`;
    for (const value of ["dp_", "dp_short", "not a key", `${keyValue}x`, badChecksum, keyValue.toUpperCase()]) {
      expect(await failure(api.keys.authenticateKey({ keyValue: value }))).toEqual({ code: "Unauthenticated", reason: "api_key_invalid" });
    }
  });

  it("is api_key_invalid for a well-formed value that was never issued", async () => {
    const { keyValue } = await newKey(inMemory(testDeps(db, { KEY_PREFIX: "other" })));
    await db.deleteFrom("api_keys").where("digest", "=", keyDigest(keyValue)).execute();
    expect(await failure(client.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_invalid" });
  });

  it("accepts keys made under an earlier prefix", async () => {
    const { keyValue, keyId } = await newKey(inMemory(testDeps(db, { KEY_PREFIX: "old" })));
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({ keyId });
  });

  it.each([
    ["free", 10],
    ["basic", 60],
    ["standard", 300],
    ["advanced", 1000],
  ])("returns organization, key, permissions and the %s plan's rate limit (%i per minute)", async (plan, limit) => {
    const organizationId = await newOrganization(client, plan);
    const { keyValue, keyId } = await newKey(client, organizationId);
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({
      organizationId,
      keyId,
      permissions: [TRIGGER_PERMISSION],
      plan,
      rateLimitPerMinute: limit,
    });
  });

  it("reports 0 (unlimited) for an operator's unlimited plan, and follows plan changes within KEY_CACHE_MS", async () => {
    const api = inMemory(testDeps(db, { PLANS: '{"unlimited":0}' }));
    const organizationId = await newOrganization(api, "unlimited");
    const { keyValue } = await newKey(api, organizationId);
    expect(await api.keys.authenticateKey({ keyValue })).toMatchObject({ plan: "unlimited", rateLimitPerMinute: 0 });
    await api.workspaces.updateOrganization({ organizationId, plan: "basic" });
    await sleep(KEY_CACHE_MS + 50);
    expect(await api.keys.authenticateKey({ keyValue })).toMatchObject({ plan: "basic", rateLimitPerMinute: 60 });
  });

  it("gives the free plan's limit to an organization whose plan is no longer configured", async () => {
    const organizationId = await newOrganization(inMemory(testDeps(db, { PLANS: '{"legacy":5}' })), "legacy");
    const { keyValue } = await newKey(client, organizationId);
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({ plan: "legacy", rateLimitPerMinute: 10 });
  });

  it("records the last use at most about once a minute", async () => {
    const clock = manualClock();
    const api = inMemory(testDeps(db, {}, clock.now));
    const { keyValue, organizationId, keyId } = await newKey(api);
    const lastUsed = async () => (await api.keys.getKey({ organizationId, keyId })).key!.lastUsedTime;
    const start = timestampFromDate(clock.time);

    await api.keys.authenticateKey({ keyValue });
    await expect.poll(lastUsed).toEqual(start);
    clock.advance(MINUTE - 1000);
    await api.keys.authenticateKey({ keyValue });
    await sleep(100);
    expect(await lastUsed()).toEqual(start);
    clock.advance(1000);
    await api.keys.authenticateKey({ keyValue });
    await expect.poll(lastUsed).toEqual(timestampFromDate(clock.time));
  });

  it("does not fail when recording the last use fails", async () => {
    const { keyValue, keyId } = await newKey();
    let writeAttempted = false;
    const failingWrites = new Proxy(db, {
      get: (target, property) => {
        if (property === "updateTable") {
          return () => {
            writeAttempted = true;
            throw new Error("write failed");
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const api = inMemory({ ...testDeps(db), db: failingWrites });
    expect(await api.keys.authenticateKey({ keyValue })).toMatchObject({ keyId });
    expect(writeAttempted).toBe(true);
  });
});

describe("organization scope", () => {
  it("every KeyService RPC on another organization's key is NotFound", async () => {
    const { organizationId: ownerId, keyId, keyValue } = await newKey();
    const organizationId = await newOrganization();
    await expectEveryKeyRpcNotFound(organizationId, keyId);
    // Nothing changed for the owner.
    expect((await client.keys.getKey({ organizationId: ownerId, keyId })).key!.state).toBe(ApiKeyState.ACTIVE);
    expect(await client.keys.authenticateKey({ keyValue })).toMatchObject({ organizationId: ownerId });
  });
});

describe("over HTTP/2", () => {
  it("creates a key, authenticates it and carries the error reason across the wire", async () => {
    const deps = testDeps(db);
    const server = createServer(
      connectNodeAdapter({
        routes: inProcessRoutes(deps),
      }),
    );
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const sessionManager = new Http2SessionManager(baseUrl);
    try {
      const api = clients(createConnectTransport({ baseUrl, httpVersion: "2", sessionManager }));
      const { keyValue, keyId, organizationId } = await newKey(api);
      expect(await api.keys.authenticateKey({ keyValue })).toMatchObject({ keyId, organizationId });
      await api.keys.deactivateKey({ organizationId, keyId });
      expect(await failure(api.keys.authenticateKey({ keyValue }))).toEqual({ code: "Unauthenticated", reason: "api_key_deactivated" });
    } finally {
      sessionManager.abort();
      server.close();
    }
  });
});

describe("AuthenticateKey cache", () => {
  it("a change made through another process applies within KEY_CACHE_MS; through this one at once", async () => {
    const here = inMemory(testDeps(db));
    const elsewhere = inMemory(testDeps(db));
    const { organizationId, keyId, keyValue } = await newKey(here);
    await here.keys.authenticateKey({ keyValue });

    await elsewhere.keys.deactivateKey({ organizationId, keyId });
    expect(await elsewhere.keys.authenticateKey({ keyValue }).catch(reasonOfRejection)).toBe("api_key_deactivated");
    // This process still holds the credentials it read, for at most KEY_CACHE_MS.
    expect((await here.keys.authenticateKey({ keyValue })).keyId).toBe(keyId);
    await sleep(KEY_CACHE_MS + 50);
    expect(await here.keys.authenticateKey({ keyValue }).catch(reasonOfRejection)).toBe("api_key_deactivated");

    await here.keys.reactivateKey({ organizationId, keyId });
    await here.keys.authenticateKey({ keyValue });
    await here.keys.deleteKey({ organizationId, keyId });
    expect(await here.keys.authenticateKey({ keyValue }).catch(reasonOfRejection)).toBe("api_key_invalid");
  });

  it("with KEY_CACHE_MS=0 reads the credentials on every call", async () => {
    const here = inMemory(testDeps(db, { KEY_CACHE_MS: "0" }));
    const elsewhere = inMemory(testDeps(db));
    const { organizationId, keyId, keyValue } = await newKey(here);
    await here.keys.authenticateKey({ keyValue });
    await elsewhere.keys.deactivateKey({ organizationId, keyId });
    expect(await here.keys.authenticateKey({ keyValue }).catch(reasonOfRejection)).toBe("api_key_deactivated");
  });

  it("checks expiry on every call, cached or not", async () => {
    const clock = manualClock(new Date());
    const api = inMemory(testDeps(db, {}, clock.now));
    const { keyValue } = await newKey(api, undefined, new Date(clock.time.getTime() + MINUTE));
    await api.keys.authenticateKey({ keyValue });
    clock.advance(MINUTE);
    expect(await api.keys.authenticateKey({ keyValue }).catch(reasonOfRejection)).toBe("api_key_expired");
  });
});

function reasonOfRejection(error: unknown): string | undefined {
  return reasonOf(ConnectError.from(error));
}
