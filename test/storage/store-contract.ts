import { createHash, randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import { PassThrough, Readable } from "node:stream";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/data/db/schema.ts";
import { newId } from "../../src/platform/ids.ts";
import { DocumentMissingError, type DocumentStore, FileTooLargeError, type StoredDocument } from "../../src/data/storage/document-store.ts";
import { referencedDocuments } from "../../src/data/repositories/files.ts";
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from "../../src/data/storage/sweep-orphans.ts";
import { readDocument } from "../support/documents.ts";
import { testDatabase } from "../support/database.ts";
import { sleep } from "../support/wait.ts";

export interface StoreUnderTest {
  store: DocumentStore;
  /** The folder uploads are staged in, which must be empty once nothing is in flight. */
  stagingDir: string;
  /** Removes the store and what it stands on; the contract's beforeAll returns it. */
  close(): Promise<void>;
}

async function readAll(store: DocumentStore, document: StoredDocument): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.open(document)) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function documentsOf(store: DocumentStore, organizationId: string): Promise<string[]> {
  const found: string[] = [];
  for await (const document of store.committed()) if (document.organizationId === organizationId) found.push(document.sha256);
  return found.sort();
}

/** A stream that yields `head`, then fails as a client going away mid-upload does. */
function abortedUpload(head: Buffer): Readable {
  return new Readable({
    read() {
      if (this.readableLength === 0 && !this.destroyed) {
        this.push(head);
        setImmediate(() => this.destroy(new Error("aborted")));
      }
    },
  });
}

/** What every document store must do; run against the folder store and the S3 store alike. */
export function describeStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`${name}: the document store contract`, () => {
    let store: DocumentStore;
    let stagingDir: string;
    let db: Kysely<Database>;
    beforeAll(async () => {
      const opened = await open();
      ({ store, stagingDir } = opened);
      db = await testDatabase();
      return opened.close;
    });

    async function organization(): Promise<string> {
      const id = newId();
      await db.insertInto("organizations").values({ id, name: "store contract", plan: "free" }).execute();
      return id;
    }

    async function commit(organizationId: string, bytes: Buffer): Promise<string> {
      const staged = await store.stage(Readable.from([bytes]), bytes.length);
      await store.commit(organizationId, staged);
      return staged.sha256;
    }

    async function recordFile(organizationId: string, sha256: string): Promise<void> {
      await db
        .insertInto("files")
        .values({
          id: newId(),
          organization_id: organizationId,
          name: "a.bin",
          content_type: "application/octet-stream",
          format: "pdf",
          size: 1,
          sha256,
        })
        .execute();
    }

    it("streams and hashes on the way in; the stored bytes are the uploaded ones; staging is left empty", async () => {
      const org = await organization();
      for (const size of [1, 64 * 1024 + 7, 12 * 1024 * 1024 + 3]) {
        const bytes = randomBytes(size);
        // Many small chunks, as a socket delivers them.
        const chunks = Array.from({ length: Math.ceil(size / 65536) }, (_, index) => bytes.subarray(index * 65536, (index + 1) * 65536));
        const seen: number[] = [];
        const staged = await store.stage(Readable.from(chunks), size, (chunk) => seen.push(chunk.length));
        expect(staged.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
        expect(staged.size).toBe(size);
        expect(seen.reduce((a, b) => a + b, 0)).toBe(size);
        await store.commit(org, staged);
        expect((await readAll(store, { organizationId: org, sha256: staged.sha256 })).equals(bytes)).toBe(true);
        expect(await readDocument(store, { organizationId: org, sha256: staged.sha256 })).toHaveLength(size);
      }
      expect(await readdir(stagingDir)).toEqual([]);
    });

    it("keeps documents per organization: another organization cannot read bytes it did not upload", async () => {
      const [owner, other] = [await organization(), await organization()];
      const sha256 = await commit(owner, Buffer.from(`private ${owner}`));
      await expect(store.open({ organizationId: other, sha256 })).rejects.toBeInstanceOf(DocumentMissingError);
      await expect(readDocument(store, { organizationId: other, sha256 })).rejects.toThrow(`the stored file ${sha256} is missing`);
      expect(await documentsOf(store, owner)).toEqual([sha256]);
      expect(await documentsOf(store, other)).toEqual([]);
    });

    it("refuses names that are not an organization id and a sha256", async () => {
      const staged = await store.stage(Readable.from([Buffer.from("x")]), 1);
      await expect(store.commit("../etc", staged)).rejects.toThrow(/not an organization id/);
      await store.discard(staged);
      await expect(store.open({ organizationId: newId(), sha256: "../../passwd" })).rejects.toThrow(/not a sha256/);
    });

    it("string chunks are stored and counted as their UTF-8 bytes", async () => {
      const staged = await store.stage(Readable.from(["hello ", "wörld"]), 12);
      expect(staged.size).toBe(12);
      expect(staged.sha256).toBe(createHash("sha256").update("hello wörld").digest("hex"));
      await store.discard(staged);
      await expect(store.stage(Readable.from(["ééé"]), 4)).rejects.toBeInstanceOf(FileTooLargeError);
    });

    it("a source that fails before anything is read rejects the stage, with nothing kept", async () => {
      const source = new PassThrough();
      const staging = store.stage(source, 1024);
      source.destroy(new Error("aborted early"));
      await expect(staging).rejects.toThrow("aborted early");
      expect(await readdir(stagingDir)).toEqual([]);
    });

    it("past the byte limit, and when the upload is aborted, nothing is kept", async () => {
      await expect(store.stage(Readable.from([randomBytes(2048)]), 1024)).rejects.toBeInstanceOf(FileTooLargeError);
      await expect(store.stage(abortedUpload(randomBytes(4096)), 1 << 20)).rejects.toThrow("aborted");
      expect(await readdir(stagingDir)).toEqual([]);
    });

    it("a committed document is complete or absent under its name: a second commit of the same bytes keeps one copy", async () => {
      const org = await organization();
      const bytes = randomBytes(1000);
      const first = await commit(org, bytes);
      const second = await commit(org, bytes);
      expect(second).toBe(first);
      expect(await documentsOf(store, org)).toEqual([first]);
      expect((await readAll(store, { organizationId: org, sha256: first })).equals(bytes)).toBe(true);
    });

    it("the orphan sweeper removes old unreferenced documents only, and never touches young ones", async () => {
      const org = await organization();
      const named = await commit(org, Buffer.from(`named ${org}`));
      const orphan = await commit(org, Buffer.from(`orphan ${org}`));
      await recordFile(org, named);
      // Nothing is old yet.
      await sweepOrphanFiles((documents) => referencedDocuments(db, documents), store);
      expect(await documentsOf(store, org)).toEqual([named, orphan].sort());
      // An hour later: the orphan goes, the named one stays.
      const later = Date.now() + ORPHAN_GRACE_MS + 60_000;
      const result = await sweepOrphanFiles((documents) => referencedDocuments(db, documents), store, later);
      expect(result.committed).toBeGreaterThanOrEqual(1);
      expect(await documentsOf(store, org)).toEqual([named]);
    });

    it("a sweep racing a new submission of the same bytes keeps them (commit refreshes; removal decides at the last moment)", async () => {
      const org = await organization();
      const bytes = Buffer.from(`raced ${org}`);
      const sha256 = await commit(org, bytes);
      const firstStoredAt = Date.now();
      // S3 keeps times to the second: the new submission comes two seconds after the first.
      await sleep(2100);
      // The sweep lists the document as old and unreferenced; between its reference query and the
      // removal, a submission of the same bytes commits them and records its file row.
      const racing = new Proxy(store, {
        get(target, property) {
          if (property === "removeIfOlder") {
            return async (document: StoredDocument, beforeMs: number) => {
              if (document.organizationId === org) {
                await commit(org, bytes);
                await recordFile(org, sha256);
              }
              return target.removeIfOlder(document, beforeMs);
            };
          }
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      await sweepOrphanFiles((documents) => referencedDocuments(db, documents), racing, firstStoredAt + 1000 + ORPHAN_GRACE_MS);
      expect((await readAll(store, { organizationId: org, sha256 })).equals(bytes)).toBe(true);
    });
  });
}
