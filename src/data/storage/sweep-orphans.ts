import type { DocumentStore, StoredDocument } from "./document-store.ts";

/** Which of `documents` some file row names, as `<organizationId>/<sha256>` (the files repository answers it). */
export type ReferencedDocuments = (documents: readonly StoredDocument[]) => Promise<Set<string>>;

/**
 * Bytes are committed before their run is recorded, so a submission that fails after committing
 * (the database went away, the pipe was paused that instant) leaves bytes no file row names; so does
 * a process that died mid-upload, in staging. Both are removed once older than this, which is far
 * longer than any request may take (the edge's request timeout is 15 minutes).
 */
export const ORPHAN_GRACE_MS = 60 * 60_000;

const BATCH = 500;

export interface SweepResult {
  committed: number;
  staged: number;
}

/**
 * Removes stored documents that no file row names and stale staged files, all older than
 * ORPHAN_GRACE_MS. A commit of the same bytes after the reference query refreshes their time, and
 * the store removes only what is still old at the moment of removal, so such bytes stay.
 */
export async function sweepOrphanFiles(referencedDocuments: ReferencedDocuments, store: DocumentStore, now = Date.now()): Promise<SweepResult> {
  const before = now - ORPHAN_GRACE_MS;
  let committed = 0;
  let batch: StoredDocument[] = [];
  const sweep = async () => {
    const referenced = await referencedDocuments(batch);
    for (const document of batch) {
      if (!referenced.has(`${document.organizationId}/${document.sha256}`) && (await store.removeIfOlder(document, before))) committed++;
    }
    batch = [];
  };
  for await (const { organizationId, sha256, modifiedMs } of store.committed()) {
    if (modifiedMs >= before) continue;
    batch.push({ organizationId, sha256 });
    if (batch.length === BATCH) await sweep();
  }
  await sweep();
  return { committed, staged: await store.removeStagedBefore(before) };
}
