import { randomUUID } from "node:crypto";
import { type FileHandle, link, mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { LRUCache } from "lru-cache";
import { stepTiming } from "../../platform/observability/step-timing.ts";
import { checkDocument, DocumentMissingError, type DocumentStore, isDocumentName, type LocalCopy, type StoredDocument } from "./document-store.ts";
import { FOLDER_MODE, type StagedFile, Staging } from "./staging.ts";
import type { YoungCollections } from "./young-collections.ts";

/**
 * Documents on a local folder: `<root>/<organizationId>/<sha256[0..2]>/<sha256>`, mode 0600 in
 * folders of mode 0700. Uploads are staged in `<root>/tmp` (same file system), fsynced, then renamed
 * into place, so a crash never leaves a half-written file under a real name.
 */
export class FileStore implements DocumentStore {
  readonly root: string;
  readonly #staging: Staging;
  /** Folders known to exist, so commits skip their mkdir. */
  readonly #folders = new Set<string>();
  /**
   * Open handles of the folders commits fsync, so a folder's fsync is one call on the libuv pool
   * rather than three (open, fsync, close): under load every upload's file-system calls queue for
   * the pool's four threads behind the fsyncs. A handle pushed out is closed (Node closes it once
   * the calls on it have ended).
   */
  readonly #folderHandles = new LRUCache<string, Promise<FileHandle>>({
    max: MAX_FOLDER_HANDLES,
    dispose: (handle) => void handle.then((opened) => opened.close()).catch(() => {}),
  });

  /** `collections`: the process's young collections, counting the bytes staged (see YoungCollections). */
  constructor(root: string, collections?: YoungCollections) {
    this.root = root;
    this.#staging = new Staging(join(root, "tmp"), collections);
  }

  async init(): Promise<void> {
    await makeDurableFolder(this.root);
    await this.#staging.init();
  }

  pathOf(organizationId: string, sha256: string): string {
    checkDocument(organizationId, sha256);
    return join(this.root, organizationId, sha256.slice(0, 2), sha256);
  }

  async open({ organizationId, sha256 }: StoredDocument): Promise<AsyncIterable<Buffer>> {
    const path = this.pathOf(organizationId, sha256);
    // Opened before it is returned, so a missing file is reported here rather than mid-read.
    const handle = await open(path, "r").catch((error: NodeJS.ErrnoException) => {
      throw error.code === "ENOENT" ? new DocumentMissingError(`the stored file ${sha256} is missing`) : error;
    });
    return handle.createReadStream();
  }

  async localCopy({ organizationId, sha256 }: StoredDocument): Promise<LocalCopy> {
    return { path: this.pathOf(organizationId, sha256), release: async () => {} };
  }

  stage(source: AsyncIterable<Buffer | string>, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile> {
    return this.#staging.stage(source, maxBytes, inspect);
  }

  discard(staged: StagedFile): Promise<void> {
    return this.#staging.discard(staged);
  }

  /**
   * One rename puts the staged file (already fsynced) under its name, replacing bytes already there:
   * the name holds the same content either way, and the fresh file's mtime restarts the sweeper's
   * grace period. Then the folder is fsynced, so the name survives a crash before the 202. Folders
   * once made are remembered, so an upload costs no mkdir.
   */
  async commit(organizationId: string, staged: StagedFile): Promise<void> {
    const target = this.pathOf(organizationId, staged.sha256);
    const folder = dirname(target);
    const timed = stepTiming?.now();
    try {
      if (!this.#folders.has(folder)) await this.#makeFolder(folder);
      await rename(staged.tempPath, target).catch(async (error: NodeJS.ErrnoException) => {
        // The folder went away (removed by hand): make it again, once.
        if (error.code !== "ENOENT") throw error;
        await this.#makeFolder(folder);
        await rename(staged.tempPath, target);
      });
    } catch (error) {
      await this.#staging.discard(staged);
      throw error;
    }
    const renamed = stepTiming?.since("commit: rename", timed!);
    await this.#fsyncFolder(folder);
    stepTiming?.since("commit: folder fsync", renamed!);
  }

  /** Makes the folder's new entry durable, through its kept handle. */
  async #fsyncFolder(folder: string): Promise<void> {
    let handle = this.#folderHandles.get(folder);
    if (handle === undefined) {
      handle = open(folder, "r");
      this.#folderHandles.set(folder, handle);
      handle.catch(() => this.#forgetFolderHandle(folder, handle!));
    }
    try {
      await (await handle).sync();
    } catch {
      // Pushed out and closed meanwhile, or the open failed: a handle of its own, as before handles were kept.
      this.#forgetFolderHandle(folder, handle);
      await fsyncDirectory(folder);
    }
  }

  #forgetFolderHandle(folder: string, handle: Promise<FileHandle>): void {
    if (this.#folderHandles.get(folder) === handle) this.#folderHandles.delete(folder);
  }

  async #makeFolder(folder: string): Promise<void> {
    // A folder made again (it was removed by hand) is another directory: its old handle would fsync the removed one.
    this.#folderHandles.delete(folder);
    await mkdir(folder, { recursive: true, mode: FOLDER_MODE });
    // The folder's name in its organization's folder, and that one's in the root, durable before a
    // file in it is acknowledged: fsynced by every commit that first meets the folder, not only by
    // the one that made it, which may still be fsyncing them when another commit finds them made.
    await fsyncDirectory(dirname(folder));
    await fsyncDirectory(dirname(dirname(folder)));
    // Bounded: a folder per organization and hash prefix (256 each) stays small; past the bound it starts again.
    if (this.#folders.size >= MAX_REMEMBERED_FOLDERS) this.#folders.clear();
    this.#folders.add(folder);
  }

  async *committed(): AsyncIterable<StoredDocument & { modifiedMs: number }> {
    for (const organizationId of await readdir(this.root).catch(() => [])) {
      const organizationDir = join(this.root, organizationId);
      for (const folder of await readdir(organizationDir).catch(() => [])) {
        if (!/^[0-9a-f]{2}$/.test(folder)) continue;
        for (const sha256 of await readdir(join(organizationDir, folder)).catch(() => [])) {
          if (!isDocumentName(organizationId, sha256)) continue;
          const info = await stat(join(organizationDir, folder, sha256)).catch(() => undefined);
          if (info?.isFile()) yield { organizationId, sha256, modifiedMs: info.mtimeMs };
        }
      }
    }
  }

  /**
   * Moves the file aside first (atomic), then judges the moved file: a commit that refreshed it
   * before the move shows in its mtime, and the file goes back; a commit after the move finds the
   * name free and renames its own copy into place.
   */
  async removeIfOlder(document: StoredDocument, beforeMs: number): Promise<boolean> {
    const path = this.pathOf(document.organizationId, document.sha256);
    const aside = join(this.#staging.dir, `swept-${randomUUID()}`);
    try {
      await rename(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw error;
    }
    const { mtimeMs } = await stat(aside);
    if (mtimeMs >= beforeMs) {
      await link(aside, path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      await unlink(aside);
      return false;
    }
    await unlink(aside);
    return true;
  }

  removeStagedBefore(beforeMs: number): Promise<number> {
    return this.#staging.removeBefore(beforeMs);
  }

  async close(): Promise<void> {
    this.#folderHandles.clear();
  }
}

/** Folders remembered at most (about 100 bytes each). */
const MAX_REMEMBERED_FOLDERS = 100_000;
/** Folder handles kept open at most: every hash prefix of one organization (256), a descriptor each. */
const MAX_FOLDER_HANDLES = 256;

/**
 * Makes the store's folder and the folders above it that are missing, each one's entry fsynced in
 * its parent: a file fsynced in a new folder is lost in a crash if the folder's own name is. A
 * folder that was there before may be one this process cannot open (one it may only write to): its
 * fsync is skipped then, as nothing better can be done.
 */
async function makeDurableFolder(folder: string): Promise<void> {
  const first = await mkdir(folder, { recursive: true, mode: FOLDER_MODE });
  if (first === undefined) return;
  const top = resolve(first);
  for (let made = resolve(folder); dirname(made) !== made; made = dirname(made)) {
    await fsyncDirectory(dirname(made)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EACCES" && error.code !== "EPERM") throw error;
    });
    if (made === top) return;
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
