import { existsSync } from "node:fs";
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newId } from "../../src/services/ids.ts";
import { FileStore } from "../../src/storage/file-store.ts";
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from "../../src/storage/sweep-orphans.ts";
import { testDatabase } from "../support/database.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "docpipe-sweep-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function commit(store: FileStore, content: string): Promise<string> {
  const staged = await store.stage(Readable.from([Buffer.from(content)]), 1024);
  await store.commit(staged);
  return staged.sha256;
}

async function age(path: string, ms: number): Promise<void> {
  const time = new Date(Date.now() - ms);
  await utimes(path, time, time);
}

it("removes old bytes no file row names and stale staged files; keeps named, young and in-flight ones", async () => {
  const db = await testDatabase();
  const store = new FileStore(dir);
  await store.init();
  const old = ORPHAN_GRACE_MS + 60_000;

  const named = await commit(store, `named ${newId()}`);
  const orphan = await commit(store, `orphan ${newId()}`);
  const young = await commit(store, `young ${newId()}`);
  await age(store.pathOf(named), old);
  await age(store.pathOf(orphan), old);
  const organizationId = newId();
  await db.insertInto("organizations").values({ id: organizationId, name: "sweep", plan: "free" }).execute();
  await db.insertInto("files").values({
    id: newId(), organization_id: organizationId, name: "a.txt", content_type: "text/plain", format: "txt", size: 10, sha256: named,
  }).execute();
  const staleStaged = join(dir, "tmp", "stale");
  const freshStaged = join(dir, "tmp", "fresh");
  await writeFile(staleStaged, "partial");
  await writeFile(freshStaged, "uploading");
  await age(staleStaged, old);

  expect(await sweepOrphanFiles(db, store)).toEqual({ committed: 1, staged: 1 });
  expect(existsSync(store.pathOf(orphan))).toBe(false);
  expect(existsSync(store.pathOf(named))).toBe(true);
  expect(existsSync(store.pathOf(young))).toBe(true);
  expect(existsSync(staleStaged)).toBe(false);
  expect(existsSync(freshStaged)).toBe(true);
});
