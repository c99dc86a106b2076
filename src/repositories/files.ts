import type { Kysely, Selectable } from "kysely";
import type { Database, FileTable } from "../db/schema.ts";

export type FileRow = Selectable<FileTable>;

/** The file row with this id; it must exist (a run's file row is never deleted). */
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
