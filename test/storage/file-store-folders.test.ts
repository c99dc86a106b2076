import { readlinkSync } from "node:fs";
import { mkdtemp, open, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { expect, it, onTestFinished, vi } from "vitest";
import { newId } from "../../src/platform/ids.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";

/**
 * Records the path of every file handle fsynced while the test runs (Linux: /proc/self/fd names a
 * descriptor's file), by wrapping FileHandle's own method: the fast tier shares one module graph,
 * so the store's import of node:fs/promises cannot be mocked.
 */
async function recordSyncs(): Promise<string[]> {
  const probe = await open(process.execPath, "r");
  const prototype = Object.getPrototypeOf(probe) as { sync: (this: { fd: number }) => Promise<void> };
  await probe.close();
  const sync = prototype.sync;
  const synced: string[] = [];
  const spy = vi.spyOn(prototype, "sync").mockImplementation(function (this: { fd: number }) {
    synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
    return sync.call(this);
  });
  onTestFinished(() => spy.mockRestore());
  return synced;
}

/** A temporary folder (its real path: /proc names descriptors by theirs), removed after the test. */
async function base(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "docpipe-store-")));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A store in a new temporary folder, with a commit of `text` as `organizationId` returning the stored path. */
async function tempStore() {
  const store = new FileStore(await base());
  await store.init();
  onTestFinished(() => store.close());
  const commit = async (organizationId: string, text: string) => {
    const staged = await store.stage(Readable.from([Buffer.from(text)]), 100);
    await store.commit(organizationId, staged);
    return store.pathOf(organizationId, staged.sha256);
  };
  return { store, commit };
}

it("a new organization's folders are fsynced in their parents before a commit ends, the first time only", async () => {
  const { store, commit } = await tempStore();
  const organizationId = newId();
  const synced = await recordSyncs();
  const outsideStaging = () => synced.filter((path) => path.startsWith(`${store.root}/`) && !path.startsWith(`${join(store.root, "tmp")}/`));

  const path = await commit(organizationId, "first");
  const prefixFolder = dirname(path);
  const organizationFolder = dirname(prefixFolder);
  // The prefix's name in the organization's folder, the organization's in the root, the file's in the prefix.
  expect(outsideStaging()).toEqual([organizationFolder, prefixFolder]);
  expect(synced.filter((path) => path === store.root)).toHaveLength(1);

  synced.length = 0;
  await commit(organizationId, "first");
  expect(outsideStaging()).toEqual([prefixFolder]);
  expect(synced).not.toContain(store.root);
});

it("commits meeting a new organization's folders at once each fsync the names above their own", async () => {
  const { store, commit } = await tempStore();
  const organizationId = newId();
  const synced = await recordSyncs();
  // Different bytes, so (almost surely) different hash-prefix folders of one new organization.
  const paths = await Promise.all(["one", "two", "three"].map((text) => commit(organizationId, text)));
  const organizationFolder = dirname(dirname(paths[0]!));
  expect(synced.filter((path) => path === store.root)).toHaveLength(3);
  expect(synced.filter((path) => path === organizationFolder)).toHaveLength(3);
});

it("a store whose folder is new fsyncs each new folder's entry in its parent", async () => {
  const parent = await base();
  const synced = await recordSyncs();
  const store = new FileStore(join(parent, "data", "documents"));
  await store.init();
  onTestFinished(() => store.close());
  expect(synced).toEqual(expect.arrayContaining([join(parent, "data"), parent]));
});
