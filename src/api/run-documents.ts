import { RUN_DOCUMENT_RULE } from "../platform/auth/rpc-permissions.ts";
import type { StoredDocument } from "../data/storage/document-store.ts";
import { type Authenticator, authorizeCaller } from "./callers.ts";
import type { ServiceDeps } from "./deps.ts";
import { requireRun } from "./run-messages.ts";

/** A run's stored document and what its response needs to say about it. */
export interface RunDocument extends StoredDocument {
  name: string;
  /** The format detected from the bytes when the run was accepted (never the client's content type). */
  format: string;
  size: number;
}

/**
 * Finds the document of an organization's run for a request's credentials, exactly as GetRun would
 * let the caller read the run: the same authentication (session cookie with the console header, a
 * service token, INTERNAL_TOKEN) and the same refusals (ConnectErrors with their reasons).
 */
export type FindRunDocument = (header: Headers, organizationId: string, runId: string) => Promise<RunDocument>;

export function createRunDocuments(deps: ServiceDeps, authenticate: Authenticator): FindRunDocument {
  return async (header, organizationId, runId) => {
    authorizeCaller(RUN_DOCUMENT_RULE, await authenticate(header), { organizationId, runId });
    const run = await requireRun(deps.db, organizationId, runId);
    return { organizationId: run.organization_id, sha256: run.file_sha256, name: run.file_name, format: run.file_format, size: Number(run.file_size) };
  };
}
