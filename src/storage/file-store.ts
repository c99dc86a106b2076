import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream, type ReadStream } from "node:fs";
import { link, mkdir, open, readdir, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";

/** A file written to a temporary name, hashed, not yet under its content address. */
export interface StagedFile {
  tempPath: string;
  sha256: string;
  size: number;
}

/** The upload passed its byte limit; nothing of it is kept. */
export class FileTooLargeError extends Error {
  override name = "FileTooLargeError";
}

/**
 * Content-addressed file storage on a local folder: a file lives at <root>/<sha256[0..2]>/<sha256>.
 * Writes go to <root>/tmp under a random name, are fsynced, then linked into place, so a crash
 * never leaves a half-written file under a real name.
 */
export class FileStore {
  readonly root: string;
  readonly #tmp: string;

  constructor(root: string) {
    this.root = root;
    this.#tmp = join(root, "tmp");
  }

  async init(): Promise<void> {
    await mkdir(this.#tmp, { recursive: true });
  }

  pathOf(sha256: string): string {
    return join(this.root, sha256.slice(0, 2), sha256);
  }

  open(sha256: string): ReadStream {
    return createReadStream(this.pathOf(sha256));
  }

  /**
   * Streams `source` through SHA-256 into a temporary file. Past `maxBytes` it stops at once,
   * removes what it wrote and rejects with FileTooLargeError. `inspect` sees every chunk (format
   * sniffing, UTF-8 checks) without a second read.
   */
  async stage(source: NodeJS.ReadableStream, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile> {
    const tempPath = join(this.#tmp, randomUUID());
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
    const out = createWriteStream(tempPath, { flush: true });
    try {
      await pipeline(source, meter, out);
    } catch (error) {
      await unlink(tempPath).catch(() => {});
      throw error;
    }
    return { tempPath, sha256: hash.digest("hex"), size };
  }

  /** Puts a staged file under its content address; bytes already stored there are kept as they are. */
  async commit(staged: StagedFile): Promise<void> {
    const target = this.pathOf(staged.sha256);
    await mkdir(dirname(target), { recursive: true });
    try {
      await link(staged.tempPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      return;
    } finally {
      await unlink(staged.tempPath).catch(() => {});
    }
    await fsyncDirectory(dirname(target));
  }

  /** Removes a staged file that will not be committed. */
  async discard(staged: StagedFile): Promise<void> {
    await unlink(staged.tempPath).catch(() => {});
  }

  /** Removes a committed file (the orphan sweeper's job: bytes that no file row names). */
  async remove(sha256: string): Promise<void> {
    await unlink(this.pathOf(sha256)).catch(() => {});
  }

  /** Every committed file with its modification time, folder by folder. */
  async *committed(): AsyncIterable<{ sha256: string; mtimeMs: number }> {
    for (const folder of await readdir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(folder)) continue;
      for (const name of await readdir(join(this.root, folder)).catch(() => [])) {
        const info = await stat(join(this.root, folder, name)).catch(() => undefined);
        if (info?.isFile() && /^[0-9a-f]{64}$/.test(name)) yield { sha256: name, mtimeMs: info.mtimeMs };
      }
    }
  }

  /** Removes staged files older than `beforeMs` (left by a process that died mid-upload); returns how many. */
  async removeStagedBefore(beforeMs: number): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.#tmp)) {
      const info = await stat(join(this.#tmp, name)).catch(() => undefined);
      if (info !== undefined && info.mtimeMs < beforeMs) {
        await unlink(join(this.#tmp, name)).catch(() => {});
        removed++;
      }
    }
    return removed;
  }
}

/** Makes a new directory entry durable. */
async function fsyncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
