import { type Kysely, type Selectable, sql } from "kysely";
import type { Database, FileTable } from "../db/schema.ts";

export type FileRow = Selectable<FileTable>;

/** The file row with this id; it must exist (a file row is deleted only with the last run naming it). */
export async function getFile(db: Kysely<Database>, fileId: string): Promise<FileRow> {
  return db.selectFrom("files").selectAll().where("id", "=", fileId).executeTakeFirstOrThrow();
}

/** Which of `documents` some file row names, as `<organizationId>/<sha256>`. */
export async function referencedDocuments(db: Kysely<Database>, documents: readonly { organizationId: string; sha256: string }[]): Promise<Set<string>> {
  if (documents.length === 0) return new Set();
  const rows = await db
    .selectFrom("files")
    .select(["organization_id", "sha256"])
    .distinct()
    .where(({ eb, refTuple, tuple }) =>
      eb(
        refTuple("organization_id", "sha256"),
        "in",
        documents.map((document) => tuple(document.organizationId, document.sha256)),
      ),
    )
    .execute();
  return new Set(rows.map((row) => `${row.organization_id}/${row.sha256}`));
}

/**
 * Deletes the file rows among `fileIds` that no run names any more; returns the documents they
 * named. A rerun naming one of them at the same moment makes the foreign key refuse the delete (the
 * statement fails and the next sweep tries again), so no kept run ever loses its file row.
 */
export async function deleteUnusedFiles(db: Kysely<Database>, fileIds: readonly string[]): Promise<{ organizationId: string; sha256: string }[]> {
  if (fileIds.length === 0) return [];
  const rows = await db
    .deleteFrom("files as f")
    .where("f.id", "in", fileIds)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom("runs as r").select(sql.lit(1).as("one")).whereRef("r.file_id", "=", "f.id"))))
    .returning(["f.organization_id", "f.sha256"])
    .execute();
  return rows.map((row) => ({ organizationId: row.organization_id, sha256: row.sha256 }));
}
