import { join } from "node:path";
import type { Config } from "../../platform/config.ts";
import type { DocumentStore } from "./document-store.ts";
import { FileStore } from "./file-store.ts";
import type { YoungCollections } from "./young-collections.ts";

/**
 * STORAGE_URL set: that bucket (staging on DATA_DIR). Unset: the folder STORAGE_DIR. The S3 client
 * is loaded only for a bucket, so a process on a folder does not carry the AWS SDK in its heap.
 */
export async function openDocumentStore(config: Pick<Config, "storageUrl" | "storageDir" | "dataDir">, collections?: YoungCollections): Promise<DocumentStore> {
  if (config.storageUrl === undefined) return new FileStore(config.storageDir, collections);
  const { parseStorageUrl, S3Store } = await import("./s3-store.ts");
  return new S3Store(parseStorageUrl(config.storageUrl), join(config.dataDir, "staging"), {}, collections);
}
