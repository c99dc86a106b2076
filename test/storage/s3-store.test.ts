import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { expect, it, onTestFinished } from "vitest";
import { newId } from "../../src/platform/ids.ts";
import { parseStorageUrl, S3Store } from "../../src/data/storage/s3-store.ts";
import { YoungCollections } from "../../src/data/storage/young-collections.ts";
import { type S3Target, startS3 } from "../support/s3-server.ts";
import { describeStoreContract } from "./store-contract.ts";

async function tempS3Store(): Promise<{ store: S3Store; stagingDir: string; s3: S3Target; close: () => Promise<void> }> {
  const s3 = await startS3();
  const stagingDir = await mkdtemp(join(tmpdir(), "docpipe-s3-staging-"));
  const store = new S3Store(parseStorageUrl(s3.storageUrl), stagingDir, s3.clientConfig);
  await store.init();
  const close = async () => {
    await store.close();
    await s3.stop();
    await rm(stagingDir, { recursive: true, force: true });
  };
  return { store, stagingDir, s3, close };
}

describeStoreContract("S3 store", tempS3Store);

it("refuses to start on a bucket that does not exist", async () => {
  const s3 = await startS3();
  const stagingDir = await mkdtemp(join(tmpdir(), "docpipe-s3-staging-"));
  onTestFinished(async () => {
    await s3.stop();
    await rm(stagingDir, { recursive: true, force: true });
  });
  const { bucket } = parseStorageUrl(s3.storageUrl);
  const store = new S3Store({ bucket: `${bucket}-missing`, prefix: "" }, stagingDir, s3.clientConfig);
  await expect(store.init()).rejects.toThrow(`cannot reach bucket ${bucket}-missing`);
  store.client.destroy();
});

it("parses STORAGE_URL into a bucket and a key prefix", () => {
  expect(parseStorageUrl("s3://bucket")).toEqual({ bucket: "bucket", prefix: "" });
  expect(parseStorageUrl("s3://bucket/docs/prod/")).toEqual({ bucket: "bucket", prefix: "docs/prod/" });
});

it("a multipart upload that fails after its first part is aborted: no object under the name, the upload aborted", async () => {
  const { store, s3, close } = await tempS3Store();
  onTestFinished(close);
  const commands: string[] = [];
  store.client.middlewareStack.add(
    (next, context) => async (args) => {
      commands.push(context.commandName!);
      return next(args);
    },
    { step: "initialize", name: "recordCommands" },
  );
  const organizationId = newId();
  const bytes = randomBytes(12 * 1024 * 1024);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const tempPath = join(tmpdir(), `docpipe-s3-${newId()}`);
  await writeFile(tempPath, bytes);
  // The staged bytes change after staging (a disk fault): the upload's own check fails at the end, after part 1.
  await truncate(tempPath, 11 * 1024 * 1024);
  await expect(store.commit(organizationId, { tempPath, sha256, size: bytes.length })).rejects.toThrow();
  await expect(store.open({ organizationId, sha256 })).rejects.toThrow(/missing/);
  expect(commands).toContain("UploadPartCommand");
  expect(commands).toContain("AbortMultipartUploadCommand");
  expect(commands).not.toContain("CompleteMultipartUploadCommand");
  // s3rver implements neither AbortMultipartUpload nor ListMultipartUploads; a real endpoint is asked.
  if (s3.external) {
    const uploads = await store.client.send(new ListMultipartUploadsCommand({ Bucket: store.location.bucket, Prefix: store.location.prefix }));
    expect(uploads.Uploads ?? []).toEqual([]);
  }
});

it("counts the bytes it stages and those it downloads for young collections", async () => {
  const s3 = await startS3();
  const stagingDir = await mkdtemp(join(tmpdir(), "docpipe-s3-staging-"));
  const received: number[] = [];
  const collections = new YoungCollections((() => received.push(0)) as unknown as NodeJS.GCFunction, 1);
  const store = new S3Store(parseStorageUrl(s3.storageUrl), stagingDir, s3.clientConfig, collections);
  onTestFinished(async () => {
    await store.close();
    await s3.stop();
    await rm(stagingDir, { recursive: true, force: true });
  });
  await store.init();
  const organizationId = newId();
  const bytes = randomBytes(1000);
  const staged = await store.stage(Readable.from([bytes]), 10_000);
  // A threshold of one byte: one collection per chunk counted.
  expect(received).toHaveLength(1);
  await store.commit(organizationId, staged);
  const copy = await store.localCopy({ organizationId, sha256: staged.sha256 });
  onTestFinished(() => copy.release());
  expect(received.length).toBeGreaterThan(1);
});
