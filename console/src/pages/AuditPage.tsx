import { useState } from "react";
import { listAuditEvents } from "../../../gen/docpipe/v1/audit_service-AuditService_connectquery.js";
import { DataTable, ErrorNotice, Field, LoadMore } from "../components.tsx";
import { formatTime } from "../format.ts";
import { usePagedList } from "../paged-list.ts";

/** Who changed what, and every sign-in of the organization's members; filtered by person (id) or resource (id). */
export function AuditPage({ org }: { org: string }) {
  const [actorId, setActorId] = useState("");
  const [resourceId, setResourceId] = useState("");
  const events = usePagedList(
    listAuditEvents,
    { organizationId: org, actorId: actorId.trim(), resourceId: resourceId.trim(), pageSize: 200 },
    (page) => page.events,
  );
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <div className="filters">
        <Field label="Person or token id">{(control) => <input {...control} value={actorId} onChange={(event) => setActorId(event.target.value)} />}</Field>
        <Field label="Resource id">{(control) => <input {...control} value={resourceId} onChange={(event) => setResourceId(event.target.value)} />}</Field>
      </div>
      <ErrorNotice error={events.error} />
      <DataTable
        label="Audit events"
        rows={events.items}
        rowKey={(event) => event.id}
        empty="No events match."
        columns={[
          { header: "When", cell: (event) => formatTime(event.time) },
          {
            header: "Who",
            rowHeader: true,
            cell: (event) => (
              <>
                {event.actorName} <span className="muted">{event.actorKind}</span>
              </>
            ),
          },
          { header: "What", cell: (event) => event.action.replace(/^docpipe\.v1\./, "") },
          {
            header: "Resource",
            cell: (event) => (
              <>
                {event.resourceType} <code>{event.resourceId}</code>
              </>
            ),
          },
          { header: "From", cell: (event) => event.address },
          { header: "Outcome", cell: (event) => event.outcome },
        ]}
      />
      <LoadMore query={events.query} />
    </section>
  );
}
