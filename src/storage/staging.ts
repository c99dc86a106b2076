import { createHash, randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";

/** A file written to a temporary name on this machine's disk, hashed, not yet stored. */
export interface StagedFile {
  tempPath: string;
  sha256: string;
  size: number;
}

/** The upload passed its byte limit; nothing of it is kept. */
export class FileTooLargeError extends Error {
  override name = "FileTooLargeError";
}

/** Stored files and their folders are private to the service's user. */
const FILE_MODE = 0o600;
export const FOLDER_MODE = 0o700;

/**
 * The local folder an upload is streamed into before it is stored. Every store stages on the
 * receiving process's own disk: format detection may need to read the whole file (a zip's
 * directory is at its end) before it is accepted, and only accepted files are stored.
 */
export class Staging {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: FOLDER_MODE });
  }

  /**
   * Streams `source` through SHA-256 into a temporary file. Past `maxBytes` it stops at once,
   * removes what it wrote and rejects with FileTooLargeError. `inspect` sees every chunk (format
   * sniffing, UTF-8 checks) without a second read.
   */
  async stage(source: NodeJS.ReadableStream, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile> {
    const tempPath = join(this.dir, randomUUID());
    const hash = createHash("sha256");
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        size += chunk.length;
        if (size > maxBytes) return callback(new FileTooLargeError(`file exceeds ${maxBytes} bytes`));
        hash.update(chunk);
        inspect?.(chunk);
        callback(null, chunk);
      },
    });
    const out = createWriteStream(tempPath, { flush: true, mode: FILE_MODE });
    try {
      await pipeline(source, meter, out);
    } catch (error) {
      await unlink(tempPath).catch(() => {});
      throw error;
    }
    return { tempPath, sha256: hash.digest("hex"), size };
  }

  /** Removes a staged file that will not be stored (or was stored elsewhere). */
  async discard(staged: StagedFile): Promise<void> {
    await unlink(staged.tempPath).catch(() => {});
  }

  /** Removes staged files older than `beforeMs` (left by a process that died mid-upload); returns how many. */
  async removeBefore(beforeMs: number): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir).catch(() => [])) {
      const info = await stat(join(this.dir, name)).catch(() => undefined);
      if (info !== undefined && info.mtimeMs < beforeMs) {
        await unlink(join(this.dir, name)).catch(() => {});
        removed++;
      }
    }
    return removed;
  }
}
