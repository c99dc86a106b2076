import { readStoredFile } from "../../src/documents/pool/stored-file.ts";
import type { DocumentStore, StoredDocument } from "../../src/data/storage/document-store.ts";

/** A stored document's bytes, checked against its sha256, as a parse task reads them. */
export async function readDocument(store: DocumentStore, document: StoredDocument): Promise<Buffer> {
  const local = await store.localCopy(document);
  try {
    return await readStoredFile({ path: local.path, sha256: document.sha256 });
  } finally {
    await local.release();
  }
}
