import { sql } from "kysely";

/**
 * Who holds a run: the owner one claim wrote on it, `<worker id>:<uuid>`; every write of a run's progress
 * is guarded by it. Unique per claim, so a run taken over after its lease expired is lost to its
 * previous holder even when both claims come from the same worker process.
 */
export interface Lease {
  runId: string;
  owner: string;
}

/** SQL true while the run is running under this lease; guards every step write (and a callback's delivery). */
export function held(lease: Lease) {
  return sql<boolean>`exists (select 1 from runs where id = ${lease.runId} and status = 'running' and lease_owner = ${lease.owner})`;
}
