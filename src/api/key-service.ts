import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { type ApiKey, ApiKeySchema, ApiKeyState } from "../../gen/docpipe/v1/key_pb.js";
import type { KeyService } from "../../gen/docpipe/v1/key_service_pb.js";
import { TRIGGER_PERMISSION } from "../platform/keys/permissions.ts";
import { generateKeyValue, keyDigest, keyHint } from "../platform/keys/key-value.ts";
import { deactivateKey, deleteKey, findKey, insertKey, type KeyRow, type KeyStateFilter, listKeys, reactivateKey } from "../data/repositories/keys.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { EnumColumn } from "./enum-columns.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid, newId } from "../platform/ids.ts";
import { requireName } from "./names.ts";
import { pipeExists } from "../data/repositories/pipes.ts";
import { findWorkspace } from "../data/repositories/workspaces.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";
import { futureExpireTime, optionalTimestamp } from "./timestamps.ts";
import { isExpired } from "../platform/keys/key-lifetime.ts";

/** The states a listing can ask for; the state a key shows is worked out from its row (keyStateAt). */
const STATE_FILTERS = new EnumColumn<Exclude<KeyStateFilter, "any">, ApiKeyState>("an ApiKeyState", {
  active: ApiKeyState.ACTIVE,
  expired: ApiKeyState.EXPIRED,
  deactivated: ApiKeyState.DEACTIVATED,
});

/** The state a key shows at `now`: deactivation wins over expiry. */
function keyStateAt(key: Pick<KeyRow, "state" | "expire_time">, now: Date): ApiKeyState {
  if (key.state === "deactivated") return ApiKeyState.DEACTIVATED;
  return isExpired(key.expire_time, now) ? ApiKeyState.EXPIRED : ApiKeyState.ACTIVE;
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
    pipeIds: key.pipe_ids ?? [],
    workspaceIds: key.workspace_ids ?? [],
  });
}

/** The most pipes or workspaces one key may be limited to. */
const MAX_KEY_LIMITS = 100;

/**
 * A key's limit to some pipes or workspaces: null (none) when empty; every id must name one of the
 * organization's own, else NotFound `<resource>_not_found` (as CreatePipe answers another
 * organization's workspace: a missing one and another organization's look alike), naming `field`.
 */
async function keyLimit(field: string, resource: "pipe" | "workspace", ids: string[], exists: (id: string) => Promise<boolean>): Promise<string[] | null> {
  if (ids.length === 0) return null;
  const unique = [...new Set(ids)];
  if (unique.length > MAX_KEY_LIMITS) throw invalidArgument(field, `${field} may list at most ${MAX_KEY_LIMITS} ids`);
  for (const id of unique) {
    if (!isUuid(id) || !(await exists(id))) {
      const message = `${field} names ${JSON.stringify(id.slice(0, 40))}: no such ${resource} in the organization`;
      throw serviceError(Code.NotFound, `${resource}_not_found`, message, { field });
    }
  }
  return unique;
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

export function createKeyService(deps: ServiceDeps, caches: ServiceCaches): ServiceImpl<typeof KeyService> {
  const { db, config, pageTokens } = deps;
  const forgetCredentials = () => caches.credentials.clear();

  return {
    async createKey(request) {
      const now = deps.now();
      const name = requireName("name", request.name);
      const expireTime = futureExpireTime(request.expireTime, now);
      await requireOrganization(db, request.organizationId);
      const pipeIds = await keyLimit("pipe_ids", "pipe", request.pipeIds, (id) => pipeExists(db, request.organizationId, id));
      const workspaceIds = await keyLimit(
        "workspace_ids",
        "workspace",
        request.workspaceIds,
        async (id) => (await findWorkspace(db, request.organizationId, id)) !== undefined,
      );
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
        pipe_ids: pipeIds,
        workspace_ids: workspaceIds,
      });
      return { key: toApiKey(key, now), keyValue };
    },

    async getKey(request) {
      const key = found(await findKey(db, ...keyIds(request)));
      return { key: toApiKey(key, deps.now()) };
    },

    async listKeys(request) {
      const { organizationId } = request;
      const state = STATE_FILTERS.filter(request.state, "state") ?? "any";
      const now = deps.now();
      const page = await listPage(
        pageTokens,
        request,
        { list: "keys", organizationId, state },
        (afterId, limit) => listKeys(db, { organizationId, state, now, afterId, limit }),
        () => requireOrganization(db, organizationId),
      );
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
  };
}
