import { join } from "node:path";
import type { Config } from "../config.ts";
import type { DocumentStore } from "./document-store.ts";
import { FileStore } from "./file-store.ts";
import { parseStorageUrl, S3Store } from "./s3-store.ts";

/** STORAGE_URL set: that bucket (staging on DATA_DIR). Unset: the folder STORAGE_DIR. */
export function openDocumentStore(config: Pick<Config, "storageUrl" | "storageDir" | "dataDir">): DocumentStore {
  return config.storageUrl === undefined ? new FileStore(config.storageDir) : new S3Store(parseStorageUrl(config.storageUrl), join(config.dataDir, "staging"));
}
