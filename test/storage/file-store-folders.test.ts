import { readlinkSync } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
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

async function base(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "docpipe-store-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

it("a new organization's folders are fsynced in their parents before a commit ends, each once", async () => {
  const store = new FileStore(await base());
  await store.init();
  onTestFinished(() => store.close());
  const synced = await recordSyncs();
  const organizationId = newId();
  const commit = async (text: string) => {
    const staged = await store.stage(Readable.from([Buffer.from(text)]), 100);
    await store.commit(organizationId, staged);
    return store.pathOf(organizationId, staged.sha256);
  };

  synced.length = 0;
  const path = await commit("first");
  const prefixFolder = dirname(path);
  const organizationFolder = dirname(prefixFolder);
  // The organization's entry in the root, the prefix's in the organization, the file's in the prefix.
  expect(synced.filter((synced) => !synced.endsWith(".part") && !synced.includes(`${join(store.root, "tmp")}/`))).toEqual([
    organizationFolder,
    store.root,
    prefixFolder,
  ]);

  synced.length = 0;
  await commit("first");
  expect(synced.filter((synced) => [store.root, organizationFolder].includes(synced))).toEqual([]);
});

it("a store whose folder is new fsyncs each new folder's entry in its parent", async () => {
  const parent = await base();
  const synced = await recordSyncs();
  const store = new FileStore(join(parent, "data", "documents"));
  await store.init();
  onTestFinished(() => store.close());
  expect(synced).toEqual(expect.arrayContaining([join(parent, "data"), parent]));
});
