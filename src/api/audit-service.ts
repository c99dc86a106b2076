import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { type AuditEvent, AuditEventSchema } from "../../gen/docpipe/v1/audit_pb.js";
import type { AuditService } from "../../gen/docpipe/v1/audit_service_pb.js";
import { type AuditEventRow, listAuditEvents } from "../data/repositories/audit-events.ts";
import type { ServiceDeps } from "./deps.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";
import { requestDate } from "./timestamps.ts";

function toAuditEvent(event: AuditEventRow): AuditEvent {
  return create(AuditEventSchema, {
    id: event.id,
    organizationId: event.organization_id ?? "",
    time: timestampFromDate(event.time),
    actorKind: event.actor_kind,
    actorId: event.actor_id,
    actorName: event.actor_name,
    action: event.action,
    resourceType: event.resource_type,
    resourceId: event.resource_id,
    address: event.address,
    outcome: event.outcome,
  });
}

export function createAuditService(deps: ServiceDeps): ServiceImpl<typeof AuditService> {
  const { db, pageTokens } = deps;
  return {
    async listAuditEvents(request) {
      const filter = {
        organizationId: request.organizationId,
        actorId: request.actorId === "" ? undefined : request.actorId,
        resourceId: request.resourceId === "" ? undefined : request.resourceId,
        startTime: request.startTime === undefined ? undefined : requestDate("start_time", request.startTime),
        endTime: request.endTime === undefined ? undefined : requestDate("end_time", request.endTime),
      };
      // Newest first: the page token's id is the last (oldest) event returned.
      const page = await listPage(
        pageTokens,
        request,
        { list: "audit_events", ...filter },
        (beforeId, limit) => listAuditEvents(db, { ...filter, beforeId, limit }),
        () => requireOrganization(db, request.organizationId),
      );
      return { events: page.items.map(toAuditEvent), nextPageToken: page.nextPageToken };
    },
  };
}
