import type { Db } from "../../data/db/schema.ts";
import type { Metrics } from "../../platform/observability/metrics.ts";
import { deleteUnusedFiles, referencedDocuments } from "../../data/repositories/files.ts";
import { deleteExpiredRuns } from "../../data/repositories/runs.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";
import { ORPHAN_GRACE_MS } from "../../data/storage/sweep-orphans.ts";

/** Runs deleted per statement: each batch is its own short transaction, so no lock is held for long. */
const RETENTION_BATCH = 500;

export interface RetentionResult {
  runs: number;
  /** File rows no kept run names. */
  files: number;
  /** Stored documents no file row names. */
  documents: number;
}

/**
 * Deletes the runs older than their pipe's retention_days, batch after batch until none is left; after
 * each batch, the file rows no run names any more, then the stored documents no file row names.
 * Bytes stored in the last ORPHAN_GRACE_MS stay: an upload of the same document commits its bytes
 * just before its file row exists (the orphan sweeper removes them later if no row comes).
 */
export async function sweepExpiredRuns(
  db: Db,
  store: DocumentStore,
  metrics: Metrics | undefined,
  now = new Date(),
  batch = RETENTION_BATCH,
): Promise<RetentionResult> {
  const removed: RetentionResult = { runs: 0, files: 0, documents: 0 };
  for (;;) {
    const expired = await deleteExpiredRuns(db, now, batch);
    const files = await deleteUnusedFiles(db, expired.fileIds);
    const referenced = await referencedDocuments(db, files);
    const unreferenced = new Map(files.map((document) => [`${document.organizationId}/${document.sha256}`, document]));
    let documents = 0;
    for (const [name, document] of unreferenced) {
      if (!referenced.has(name) && (await store.removeIfOlder(document, now.getTime() - ORPHAN_GRACE_MS))) documents++;
    }
    metrics?.retentionRemoved.inc({ kind: "runs" }, expired.runs);
    metrics?.retentionRemoved.inc({ kind: "files" }, files.length);
    metrics?.retentionRemoved.inc({ kind: "documents" }, documents);
    removed.runs += expired.runs;
    removed.files += files.length;
    removed.documents += documents;
    if (expired.runs < batch) return removed;
  }
}
