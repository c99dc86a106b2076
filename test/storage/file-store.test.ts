import { mkdtemp, readdir, readlink, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { expect, it, onTestFinished, vi } from "vitest";
import { newId } from "../../src/platform/ids.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { YoungCollections } from "../../src/data/storage/young-collections.ts";
import { describeStoreContract } from "./store-contract.ts";

async function tempFileStore(): Promise<{ store: FileStore; close: () => Promise<void> }> {
  const store = new FileStore(await mkdtemp(join(tmpdir(), "docpipe-store-")));
  await store.init();
  return { store, close: () => rm(store.root, { recursive: true, force: true }) };
}

describeStoreContract("folder store", async () => {
  const { store, close } = await tempFileStore();
  return { store, stagingDir: join(store.root, "tmp"), close };
});

it("stored files are private to the service's user: files 0600, folders 0700", async () => {
  const { store, close } = await tempFileStore();
  onTestFinished(close);
  const organizationId = newId();
  const staged = await store.stage(Readable.from([Buffer.from("private")]), 100);
  expect((await stat(staged.tempPath)).mode & 0o777).toBe(0o600);
  await store.commit(organizationId, staged);
  const path = store.pathOf(organizationId, staged.sha256);
  expect((await stat(path)).mode & 0o777).toBe(0o600);
  for (const folder of [dirname(path), dirname(dirname(path)), store.root, join(store.root, "tmp")]) {
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
  }
});

it("counts every byte it stages for young collections, across uploads", async () => {
  const root = await mkdtemp(join(tmpdir(), "docpipe-store-"));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  const collect = vi.fn();
  const store = new FileStore(root, new YoungCollections(collect as unknown as NodeJS.GCFunction, 1000));
  await store.init();
  await store.stage(Readable.from([Buffer.alloc(600), Buffer.alloc(300)]), 10_000);
  expect(collect).not.toHaveBeenCalled();
  await store.stage(Readable.from([Buffer.alloc(100)]), 10_000);
  expect(collect).toHaveBeenCalledExactlyOnceWith({ type: "minor" });
});

/** This process's open descriptors on `path` (Linux: /proc/self/fd); a removed folder's read "<path> (deleted)". */
async function descriptorsOn(path: string): Promise<string[]> {
  const targets = await Promise.all((await readdir("/proc/self/fd")).map((fd) => readlink(join("/proc/self/fd", fd)).catch(() => "")));
  return targets.filter((target) => target === path || target.startsWith(`${path} `));
}

it("fsyncs a folder through one handle kept open across commits; a folder made again gets a new one; close() closes them", async () => {
  const { store, close } = await tempFileStore();
  onTestFinished(close);
  const organizationId = newId();
  const commit = async (text: string) => {
    const staged = await store.stage(Readable.from([Buffer.from(text)]), 100);
    await store.commit(organizationId, staged);
    return store.pathOf(organizationId, staged.sha256);
  };
  const path = await commit("same bytes");
  await commit("same bytes");
  await commit("same bytes");
  const folder = dirname(path);
  expect(await descriptorsOn(folder)).toEqual([folder]);

  await rm(join(store.root, organizationId), { recursive: true });
  expect(await commit("same bytes")).toBe(path);
  expect((await stat(path)).size).toBe("same bytes".length);
  await vi.waitFor(async () => expect(await descriptorsOn(folder)).toEqual([folder]));

  await store.close();
  await vi.waitFor(async () => expect(await descriptorsOn(folder)).toEqual([]));
});
