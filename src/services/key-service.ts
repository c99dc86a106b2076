import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { LRUCache } from "lru-cache";
import { type ApiKey, ApiKeySchema, ApiKeyState } from "../../gen/docpipe/v1/key_pb.js";
import { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { generateKeyValue, isWellFormedKeyValue, keyDigest, keyHint } from "../keys/key-value.ts";
import {
  deactivateKey, deleteKey, findKey, findKeyCredentials, insertKey, type KeyCredentials, type KeyRow, type KeyStateFilter,
  listKeys, reactivateKey, recordKeyUse,
} from "../repositories/keys.ts";
import { requireOrganization } from "../repositories/organizations.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid, newId } from "./ids.ts";
import { requireName } from "./names.ts";
import { pageSize } from "./pagination.ts";
import { optionalTimestamp } from "./timestamps.ts";

/** The permission every key carries (DECISIONS.md); stored per key so more can come. */
export const TRIGGER_PERMISSION = "ApiKeyAuth.Trigger.Create";

/** last_used_time is written at most once per this interval per key, never on every request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const STATE_FILTERS: Readonly<Record<number, KeyStateFilter>> = {
  [ApiKeyState.UNSPECIFIED]: "any",
  [ApiKeyState.ACTIVE]: "active",
  [ApiKeyState.EXPIRED]: "expired",
  [ApiKeyState.DEACTIVATED]: "deactivated",
};

/** A key past its expiration time; the instant itself counts as past. */
export function isExpired(expireTime: Date | null, now: Date): boolean {
  return expireTime !== null && expireTime.getTime() <= now.getTime();
}

/** The state a key shows at `now`: deactivation wins over expiry. */
export function keyStateAt(key: Pick<KeyRow, "state" | "expire_time">, now: Date): ApiKeyState {
  if (key.state === "deactivated") return ApiKeyState.DEACTIVATED;
  return isExpired(key.expire_time, now) ? ApiKeyState.EXPIRED : ApiKeyState.ACTIVE;
}

/** Whether a use at `now` should be recorded, given the last one recorded. */
export function isKeyUseDue(lastUsedTime: Date | null, now: Date): boolean {
  return lastUsedTime === null || now.getTime() - lastUsedTime.getTime() >= LAST_USED_RESOLUTION_MS;
}

function toApiKey(key: KeyRow, now: Date): ApiKey {
  return create(ApiKeySchema, {
    id: key.id,
    organizationId: key.organization_id,
    name: key.name,
    hint: key.hint,
    state: keyStateAt(key, now),
    permissions: key.permissions,
    createTime: timestampFromDate(key.create_time),
    expireTime: optionalTimestamp(key.expire_time),
    lastUsedTime: optionalTimestamp(key.last_used_time),
    deactivateTime: optionalTimestamp(key.deactivate_time),
  });
}

/** The expiration time asked for: unset means never; otherwise it must lie after `now`. */
function futureExpireTime(expireTime: Timestamp | undefined, now: Date): Date | null {
  if (expireTime === undefined) return null;
  const date = timestampDate(expireTime);
  if (date.getTime() <= now.getTime()) throw invalidArgument("expire_time", "expire_time must be in the future");
  return date;
}

function stateFilter(state: ApiKeyState): KeyStateFilter {
  const filter = STATE_FILTERS[state];
  if (filter === undefined) throw invalidArgument("state", `state ${state} is not an ApiKeyState`);
  return filter;
}

/** The key named by the request, or NotFound: a missing key, another organization's, and a non-UUID id look alike. */
function found<T>(key: T | undefined): T {
  if (key === undefined) throw notFound("api_key");
  return key;
}

/** The ids of a request naming one key; ids that are not UUIDs name nothing. */
function keyIds(request: { organizationId: string; keyId: string }): [string, string] {
  if (!isUuid(request.organizationId) || !isUuid(request.keyId)) throw notFound("api_key");
  return [request.organizationId, request.keyId];
}

function unauthenticated(reason: string, message: string) {
  return serviceError(Code.Unauthenticated, reason, message);
}

export function createKeyService(deps: ServiceDeps): ServiceImpl<typeof KeyService> {
  const { db, config, pageTokens } = deps;
  // A key's stored credentials are reused for KEY_CACHE_MS (default 1 s). State changes made through
  // this instance clear the cache at once; other processes see them within that time. Expiry is
  // checked on every call, so it is exact.
  const credentials = new LRUCache<string, KeyCredentials>({ max: 10_000, ttl: Math.max(config.keyCacheMs, 1) });
  // Bumped by every change: a lookup that started before a change must not cache what it read.
  let generation = 0;
  function forgetCredentials(): void {
    generation++;
    credentials.clear();
  }

  /** The key's credentials by its value's digest: from the cache, else one indexed query (misses are not cached). */
  async function credentialsOf(keyValue: string): Promise<KeyCredentials | undefined> {
    const digest = keyDigest(keyValue);
    const cacheKey = digest.toString("base64");
    const cached = credentials.get(cacheKey);
    if (cached !== undefined) return cached;
    const startedAt = generation;
    const key = await findKeyCredentials(db, digest);
    if (key !== undefined && startedAt === generation && config.keyCacheMs > 0) credentials.set(cacheKey, key);
    return key;
  }

  /** Fire-and-forget: a failed write only delays the last-used time; it must never fail the request. */
  function recordUse(keyId: string, now: Date): void {
    recordKeyUse(db, keyId, now, LAST_USED_RESOLUTION_MS).catch(() => {});
  }

  return {
    async createKey(request) {
      const now = deps.now();
      const name = requireName("name", request.name);
      const expireTime = futureExpireTime(request.expireTime, now);
      await requireOrganization(db, request.organizationId);
      const keyValue = generateKeyValue(config.keyPrefix);
      const key = await insertKey(db, {
        id: newId(),
        organization_id: request.organizationId,
        name,
        digest: keyDigest(keyValue),
        hint: keyHint(keyValue),
        permissions: [TRIGGER_PERMISSION],
        state: "active",
        create_time: now,
        expire_time: expireTime,
      });
      return { key: toApiKey(key, now), keyValue };
    },

    async getKey(request) {
      const key = found(await findKey(db, ...keyIds(request)));
      return { key: toApiKey(key, deps.now()) };
    },

    async listKeys(request) {
      const size = pageSize(request.pageSize);
      const state = stateFilter(request.state);
      const query = { list: "keys", organizationId: request.organizationId, state };
      const afterId = pageTokens.after(request.pageToken, query);
      await requireOrganization(db, request.organizationId);
      const now = deps.now();
      const rows = await listKeys(db, { organizationId: request.organizationId, state, now, afterId, limit: size + 1 });
      const page = pageTokens.page(rows, size, query);
      return { keys: page.items.map((key) => toApiKey(key, now)), nextPageToken: page.nextPageToken };
    },

    async deactivateKey(request) {
      const now = deps.now();
      const key = found(await deactivateKey(db, ...keyIds(request), now));
      forgetCredentials();
      return { key: toApiKey(key, now) };
    },

    async reactivateKey(request) {
      const key = found(await reactivateKey(db, ...keyIds(request)));
      forgetCredentials();
      return { key: toApiKey(key, deps.now()) };
    },

    async deleteKey(request) {
      if (!(await deleteKey(db, ...keyIds(request)))) throw notFound("api_key");
      forgetCredentials();
      return {};
    },

    async authenticateKey(request) {
      const keyValue = request.keyValue;
      if (keyValue === "") throw unauthenticated("api_key_missing", "send an API key in the X-Api-Key header");
      // Checked before any query: malformed values and typos cost no database round trip.
      if (!isWellFormedKeyValue(keyValue)) throw unauthenticated("api_key_invalid", "the API key is malformed or mistyped (its checksum does not match)");
      const key = await credentialsOf(keyValue);
      if (key === undefined) throw unauthenticated("api_key_invalid", "the API key is not known; it may have been deleted");
      if (key.state === "deactivated") throw unauthenticated("api_key_deactivated", "the API key is deactivated; reactivate it or use another key");
      const now = deps.now();
      if (isExpired(key.expire_time, now)) throw unauthenticated("api_key_expired", "the API key has expired; create a new key");
      if (isKeyUseDue(key.last_used_time, now)) {
        recordUse(key.id, now);
        // The cached credentials too, or every request of the cached second would write again.
        key.last_used_time = now;
      }
      return {
        organizationId: key.organization_id,
        keyId: key.id,
        permissions: key.permissions,
        plan: key.plan,
        rateLimitPerMinute: rateLimitOf(config.plans, key.plan),
      };
    },
  };
}

/**
 * Requests per minute for a plan; 0 is unlimited. An organization whose plan an operator has since
 * removed from PLANS gets the free plan's limit rather than none.
 */
export function rateLimitOf(plans: Readonly<Record<string, number>>, plan: string): number {
  return Object.hasOwn(plans, plan) ? plans[plan]! : plans["free"]!;
}
