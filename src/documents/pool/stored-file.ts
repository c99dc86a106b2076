import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** A stored document as a task receives it: where it lies, and the sha256 it must have. */
export interface StoredFile {
  path: string;
  sha256: string;
}

/** The run's stored file is missing or not the bytes that were submitted; the message is shown on the step. */
export class StoredFileError extends Error {
  override name = "StoredFileError";
}

/**
 * The file's bytes, checked against its sha256. Tasks read their document themselves, in the pool's
 * process: the process serving HTTP never holds, hashes or copies a document to hand it over.
 */
export async function readStoredFile(file: StoredFile): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(file.path)) {
      hash.update(chunk as Buffer);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    throw unreadableStoredFile(file, error);
  }
  const actual = hash.digest("hex");
  if (actual !== file.sha256) throw new StoredFileError(`the stored file is corrupt: its sha256 is ${actual}, expected ${file.sha256}`);
  return Buffer.concat(chunks);
}

/** The StoredFileError for a stored file that could not be read (or copied) because of `error`. */
export function unreadableStoredFile(file: StoredFile, error: unknown): StoredFileError {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return new StoredFileError(`the stored file ${file.sha256} is missing`);
  return new StoredFileError(`the stored file ${file.sha256} cannot be read: ${(error as Error).message}`);
}
