import type { Kysely } from "kysely";
import type { Database } from "../db/schema.ts";
import { referencedSha256s } from "../repositories/files.ts";
import type { FileStore } from "./file-store.ts";

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

/** Removes committed files that no file row names and stale staged files, all older than ORPHAN_GRACE_MS. */
export async function sweepOrphanFiles(db: Kysely<Database>, store: FileStore, now = Date.now()): Promise<SweepResult> {
  const before = now - ORPHAN_GRACE_MS;
  let committed = 0;
  let batch: string[] = [];
  const sweep = async () => {
    const referenced = await referencedSha256s(db, batch);
    for (const sha256 of batch) {
      if (!referenced.has(sha256)) {
        await store.remove(sha256);
        committed++;
      }
    }
    batch = [];
  };
  for await (const file of store.committed()) {
    if (file.mtimeMs >= before) continue;
    batch.push(file.sha256);
    if (batch.length === BATCH) await sweep();
  }
  await sweep();
  return { committed, staged: await store.removeStagedBefore(before) };
}
