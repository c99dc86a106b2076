import { useInfiniteQuery } from "@connectrpc/connect-query";
import { useState } from "react";
import { listAuditEvents } from "../../../gen/docpipe/v1/audit_service-AuditService_connectquery.js";
import { EmptyState, ErrorNotice, Field, LoadMore, TableBox } from "../components.tsx";
import { formatTime } from "../format.ts";

/** Who changed what, and every sign-in of the organization's members; filtered by person (id) or resource (id). */
export function AuditPage({ org }: { org: string }) {
  const [actorId, setActorId] = useState("");
  const [resourceId, setResourceId] = useState("");
  const query = useInfiniteQuery(
    listAuditEvents,
    { organizationId: org, actorId: actorId.trim(), resourceId: resourceId.trim(), pageSize: 200, pageToken: "" },
    { pageParamKey: "pageToken", getNextPageParam: (page) => page.nextPageToken || undefined },
  );
  const events = { error: query.error, data: query.data && { events: query.data.pages.flatMap((page) => page.events) } };
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <div className="filters">
        <Field label="Person or token id">{(control) => <input {...control} value={actorId} onChange={(event) => setActorId(event.target.value)} />}</Field>
        <Field label="Resource id">{(control) => <input {...control} value={resourceId} onChange={(event) => setResourceId(event.target.value)} />}</Field>
      </div>
      <ErrorNotice error={events.error} />
      {events.data?.events.length === 0 && <EmptyState>No events match.</EmptyState>}
      {events.data && events.data.events.length > 0 && (
        <TableBox label="Audit events">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Resource</th>
                <th scope="col">From</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {events.data.events.map((event) => (
                <tr key={event.id}>
                  <td>{formatTime(event.time)}</td>
                  <th scope="row">
                    {event.actorName} <span className="muted">{event.actorKind}</span>
                  </th>
                  <td>{event.action.replace(/^docpipe\.v1\./, "")}</td>
                  <td>
                    {event.resourceType} <code>{event.resourceId}</code>
                  </td>
                  <td>{event.address}</td>
                  <td>{event.outcome}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <LoadMore query={query} />
    </section>
  );
}
