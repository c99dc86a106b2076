import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { MIB } from "./report.ts";

/** Removes every organization's stored files from a storage folder; staging ("tmp") stays. Call while every server is idle. */
export async function clearStorage(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    if (entry !== "tmp") await rm(join(dir, entry), { recursive: true, force: true });
  }
}

/** What the servers of a bench may store before their files are removed between rounds. */
export const CLEAR_AFTER_BYTES = 1024 * MIB;

/**
 * A storage folder's files, removed between rounds only once they hold CLEAR_AFTER_BYTES: 10 MiB
 * uploads fill a disk within minutes, 1 KiB uploads never need a clear within a bench.
 *
 * A removal is not free for the rounds after it. On ext4 without a journal (the bench hosts' root
 * file system), a new file is given an inode that was not freed in the last minute (several minutes
 * while its inode table is not yet written back), and the search passes over every inode freed
 * meanwhile, one by one, at each create: after tens of thousands of 1 KiB files were removed, the
 * libuv threads' CPU per submission doubled (`perf`: `find_inode_bit` and `recently_deleted`), and
 * the server that ran first after the removal served a fifth less than in its other rounds. The
 * figures are in bench/README.md (2026-12-07).
 */
export class StoredFiles {
  readonly dir: string;
  #bytes = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Counts `requests` uploads of `fileSize` bytes stored. */
  added(requests: number, fileSize: number): void {
    this.#bytes += requests * fileSize;
  }

  /** Removes the stored files if they hold CLEAR_AFTER_BYTES or more; true when it did. */
  async clearIfFull(): Promise<boolean> {
    if (this.#bytes < CLEAR_AFTER_BYTES) return false;
    await clearStorage(this.dir);
    this.#bytes = 0;
    return true;
  }
}
