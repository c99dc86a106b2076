import { execFile } from "node:child_process";
import { readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sleep } from "./processes.ts";
import { MIB } from "./report.ts";

/** Touched at every removal of stored files, so a bench run knows when its predecessor last removed any. */
const REMOVAL_MARKER = join(tmpdir(), "docpipe-bench-last-removal");
/**
 * How long ext4 keeps a freed inode from reuse once its inode table is written back (`sync`): a
 * minute (RECENTCY_MIN in the kernel's fs/ext4/ialloc.c), and a few seconds for the removal itself.
 */
const REMOVAL_MEMORY_MS = 65_000;

/** Records that stored files were removed now (see waitForRemovalsToAge). */
export async function noteRemoval(): Promise<void> {
  await writeFile(REMOVAL_MARKER, "");
}

/**
 * Waits until the last removal of a bench's stored files (in this run or the run before) is
 * REMOVAL_MEMORY_MS old, after a `sync` so that the kernel's shorter memory applies: until then,
 * every file a server creates pays for the search past the freed inodes (see StoredFiles), more
 * at the start of the rounds than at their end.
 */
export async function waitForRemovalsToAge(): Promise<void> {
  const removed = await stat(REMOVAL_MARKER).then(
    ({ mtimeMs }) => mtimeMs,
    () => undefined,
  );
  if (removed === undefined) return;
  const waitMs = removed + REMOVAL_MEMORY_MS - Date.now();
  if (waitMs <= 0) return;
  await promisify(execFile)("sync");
  process.stderr.write(`bench: waiting ${Math.ceil(waitMs / 1000)} s for the file system to reuse the inodes of removed files\n`);
  await sleep(waitMs);
}

/**
 * Removes every organization's stored files from a storage folder, keeping the folders that hold
 * them and staging ("tmp"): a server that remade its folders after a clear would pay for them in
 * measured time, another that shares them would not. Call while every server is idle.
 */
export async function clearStorage(dir: string): Promise<void> {
  for (const organization of await readdir(dir, { withFileTypes: true })) {
    // Staging stays, and so do files beside the folders (the service's DATA_DIR is the same folder).
    if (organization.name === "tmp" || !organization.isDirectory()) continue;
    for (const prefix of await readdir(join(dir, organization.name))) {
      const folder = join(dir, organization.name, prefix);
      for (const file of await readdir(folder)) await rm(join(folder, file), { force: true });
    }
  }
  await noteRemoval();
}

/** What the servers of a bench may store before their files are removed between rounds. */
const CLEAR_AFTER_BYTES = 1024 * MIB;

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

  /** Removes the stored files, if any were counted; true when it did. */
  async clear(): Promise<boolean> {
    if (this.#bytes === 0) return false;
    await clearStorage(this.dir);
    this.#bytes = 0;
    return true;
  }

  /** Removes the stored files if they hold CLEAR_AFTER_BYTES or more; true when it did. */
  clearIfFull(): Promise<boolean> {
    return this.#bytes >= CLEAR_AFTER_BYTES ? this.clear() : Promise.resolve(false);
  }
}
