import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { type ServiceToken, ServiceTokenSchema } from "../../gen/docpipe/v1/service_token_pb.js";
import type { ServiceTokenService } from "../../gen/docpipe/v1/service_token_service_pb.js";
import { newId } from "../platform/ids.ts";
import { generateKeyValue, keyDigest, keyHint } from "../platform/keys/key-value.ts";
import { deleteServiceToken, insertServiceToken, listServiceTokens, type ServiceTokenRow } from "../data/repositories/service-tokens.ts";
import { requireRole, ROLES } from "./accounts.ts";
import { SERVICE_TOKEN_PREFIX } from "./callers.ts";
import type { ServiceDeps } from "./deps.ts";
import { notFound, serviceError } from "./errors.ts";
import { requireName } from "./names.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";
import { futureExpireTime, optionalTimestamp } from "./timestamps.ts";

function toServiceToken(token: ServiceTokenRow): ServiceToken {
  return create(ServiceTokenSchema, {
    id: token.id,
    organizationId: token.organization_id,
    name: token.name,
    hint: token.hint,
    role: ROLES.proto(token.role),
    createTime: timestampFromDate(token.create_time),
    expireTime: optionalTimestamp(token.expire_time),
    lastUsedTime: optionalTimestamp(token.last_used_time),
  });
}

export function createServiceTokenService(deps: ServiceDeps): ServiceImpl<typeof ServiceTokenService> {
  const { db, pageTokens } = deps;
  return {
    async createServiceToken(request) {
      const name = requireName("name", request.name);
      const role = requireRole(request.role);
      // A program never owns an organization: owners are people.
      if (role === "owner") throw serviceError(Code.InvalidArgument, "invalid_argument", "a service token cannot have the owner role", { field: "role" });
      const now = deps.now();
      const expireTime = futureExpireTime(request.expireTime, now);
      await requireOrganization(db, request.organizationId);
      const tokenValue = generateKeyValue(SERVICE_TOKEN_PREFIX);
      const token = await insertServiceToken(db, {
        id: newId(),
        organization_id: request.organizationId,
        name,
        digest: keyDigest(tokenValue),
        hint: keyHint(tokenValue),
        role,
        create_time: now,
        expire_time: expireTime,
      });
      return { serviceToken: toServiceToken(token), tokenValue };
    },

    async listServiceTokens(request) {
      const { organizationId } = request;
      const page = await listPage(
        pageTokens,
        request,
        { list: "service_tokens", organizationId },
        (afterId, limit) => listServiceTokens(db, { organizationId, afterId, limit }),
        () => requireOrganization(db, organizationId),
      );
      return { serviceTokens: page.items.map(toServiceToken), nextPageToken: page.nextPageToken };
    },

    async deleteServiceToken(request) {
      if (!(await deleteServiceToken(db, request.organizationId, request.serviceTokenId))) throw notFound("service_token");
      return {};
    },
  };
}
