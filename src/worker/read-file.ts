import { createHash } from "node:crypto";
import type { FileStore } from "../storage/file-store.ts";

/** The run's stored file is missing or not the bytes that were submitted; the message is shown on the step. */
export class StoredFileError extends Error {
  override name = "StoredFileError";
}

/** The bytes stored under `sha256`, checked against it. */
export async function readVerifiedFile(store: FileStore, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const hash = createHash("sha256");
  try {
    for await (const chunk of store.open(sha256)) {
      hash.update(chunk as Buffer);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new StoredFileError(`the stored file ${sha256} is missing`);
    throw new StoredFileError(`the stored file ${sha256} cannot be read: ${(error as Error).message}`);
  }
  const actual = hash.digest("hex");
  if (actual !== sha256) throw new StoredFileError(`the stored file is corrupt: its sha256 is ${actual}, expected ${sha256}`);
  return Buffer.concat(chunks);
}
