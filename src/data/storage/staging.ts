import { createHash, randomUUID } from "node:crypto";
import { type FileHandle, mkdir, open, readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { stepTiming } from "../../platform/observability/step-timing.ts";
import type { YoungCollections } from "./young-collections.ts";

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
  readonly #collections: YoungCollections | undefined;

  /** `collections`: the process's, which counts every byte staged (see YoungCollections). */
  constructor(dir: string, collections?: YoungCollections) {
    this.dir = dir;
    this.#collections = collections;
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: FOLDER_MODE });
  }

  /**
   * Reads `source` chunk by chunk, hashing each and writing it to a temporary file, then fsyncs
   * the file. Past `maxBytes` it stops at once (the source is destroyed), removes what it wrote and
   * rejects with FileTooLargeError. `inspect` sees every chunk (format sniffing, UTF-8 checks)
   * without a second read.
   *
   * A loop and one file handle, not a stream pipeline: a pipeline made per upload (a Transform, a
   * WriteStream, their listeners and an AbortController) got its request's objects promoted to the
   * old generation, about 11 KiB per 1 KiB upload, and the full collections that follow are what
   * the slowest requests wait on (bench/README.md). The loop waits for each write, so a slow disk
   * holds the upload back rather than buffering it. The bytes are counted for young collections
   * (see YoungCollections): the socket buffers they came in are freed only by one.
   */
  async stage(source: AsyncIterable<Buffer | string>, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile> {
    const tempPath = join(this.dir, randomUUID());
    const hash = createHash("sha256");
    let size = 0;
    // The first read starts before the file is opened, so the source's errors are listened for from
    // now on (its rejection is awaited below); a file that cannot be opened destroys a stream source
    // (an iterator's own reader, such as the multipart reader's, stops it).
    const chunks = source[Symbol.asyncIterator]();
    const first = chunks.next();
    first.catch(() => {});
    let timed = stepTiming?.now();
    const handle = await open(tempPath, "w", FILE_MODE).catch((error: unknown) => {
      (source as { destroy?: () => void }).destroy?.();
      throw error;
    });
    timed = stepTiming?.since("staging: open", timed!);
    try {
      try {
        for (let next = await first; !next.done; next = await chunks.next()) {
          const chunk = typeof next.value === "string" ? Buffer.from(next.value) : next.value;
          size += chunk.length;
          if (size > maxBytes) throw new FileTooLargeError(`file exceeds ${maxBytes} bytes`);
          hash.update(chunk);
          this.#collections?.received(chunk.length);
          inspect?.(chunk);
          await writeAll(handle, chunk);
        }
        timed = stepTiming?.since("staging: read and write", timed!);
        await handle.sync();
        stepTiming?.since("staging: fsync", timed!);
      } catch (error) {
        await chunks.return?.();
        await handle.close().catch(() => {});
        throw error;
      }
      // Closed without waiting: the bytes are fsynced, and the rename that stores them needs only the
      // name. Under load the close queued for the libuv pool behind other uploads' fsyncs (1.5 ms at
      // the median, 5 ms on average per 1 KiB upload, bench/README.md), on every upload's way to its 202.
      void handle.close().catch(() => {});
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

/** Writes all of `chunk` at the file's position (a write may take fewer bytes than it was given). */
async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let written = 0; written < chunk.length; ) {
    written += (await handle.write(chunk, written)).bytesWritten;
  }
}
