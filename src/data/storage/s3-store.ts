import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { type Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { checkDocument, DocumentMissingError, type DocumentStore, isDocumentName, type LocalCopy, type StoredDocument } from "./document-store.ts";
import { type StagedFile, Staging } from "./staging.ts";
import type { YoungCollections } from "./young-collections.ts";

export interface S3Location {
  bucket: string;
  /** Prefix of every key, empty or ending in "/". */
  prefix: string;
}

/** `s3://bucket/prefix` as a bucket and a key prefix. */
export function parseStorageUrl(url: string): S3Location {
  const parsed = new URL(url);
  if (parsed.protocol !== "s3:" || parsed.hostname === "") throw new Error("STORAGE_URL must look like s3://bucket or s3://bucket/prefix");
  const path = decodeURIComponent(parsed.pathname).replace(/^\/+|\/+$/g, "");
  return { bucket: parsed.hostname, prefix: path === "" ? "" : `${path}/` };
}

/**
 * Part size of multipart uploads. lib-storage holds up to two parts of an upload in memory, so this
 * bounds an upload's memory at 16 MiB; a document up to 8 MiB is one PUT.
 */
const PART_SIZE = 8 * 1024 * 1024;
const UPLOADS = new Set(["PutObjectCommand", "UploadPartCommand"]);

/**
 * Documents in an S3-compatible bucket under `<prefix><organizationId>/<sha256>`, through the AWS SDK
 * v3. Endpoint, region and credentials come from the SDK's standard environment variables
 * (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...); with a custom
 * endpoint, requests are path-style (`endpoint/bucket/key`), which S3-compatible servers expect.
 *
 * Uploads are staged on this machine (see Staging), then streamed from the staged file with
 * lib-storage: one PUT for a small file, a multipart upload of 8 MiB parts otherwise. S3 makes an
 * object visible only when its upload completes, so no reader sees half a document; a failed
 * multipart upload is aborted, leaving no parts behind.
 */
export class S3Store implements DocumentStore {
  readonly client: S3Client;
  readonly location: S3Location;
  readonly #staging: Staging;
  readonly #endpoint: string | undefined;
  readonly #collections: YoungCollections | undefined;

  /** `collections`: the process's young collections, counting the bytes staged and downloaded (see YoungCollections). */
  constructor(location: S3Location, stagingDir: string, clientConfig: S3ClientConfig = {}, collections?: YoungCollections) {
    const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
    this.#endpoint = typeof clientConfig.endpoint === "string" ? clientConfig.endpoint : endpoint;
    this.client = new S3Client({ forcePathStyle: endpoint !== undefined, ...clientConfig });
    // Uploads are not hashed a second time for the request signature: the SDK's flexible checksum
    // (CRC32, sent with each PUT and part) already lets S3 refuse bytes damaged on the way.
    this.client.middlewareStack.add(
      (next, context) => async (args) => {
        const { headers } = args.request as { headers?: Record<string, string> };
        if (UPLOADS.has(context.commandName ?? "") && headers !== undefined) headers["x-amz-content-sha256"] = "UNSIGNED-PAYLOAD";
        return next(args);
      },
      { step: "build", name: "docpipeUnsignedPayload" },
    );
    this.location = location;
    this.#staging = new Staging(stagingDir, collections);
    this.#collections = collections;
  }

  keyOf(organizationId: string, sha256: string): string {
    checkDocument(organizationId, sha256);
    return `${this.location.prefix}${organizationId}/${sha256}`;
  }

  /** Creates the staging folder and checks that the bucket answers, so a wrong setting stops the start. */
  async init(): Promise<void> {
    await this.#staging.init();
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.location.bucket }));
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      const reason =
        status === 404 ? "no such bucket" : status === 403 ? "access denied (check the AWS credentials)" : (error as Error).message || (error as Error).name;
      throw new Error(`cannot reach bucket ${this.location.bucket}${this.#endpoint === undefined ? "" : ` at ${this.#endpoint}`}: ${reason}`);
    }
  }

  stage(source: AsyncIterable<Buffer | string>, maxBytes: number, inspect?: (chunk: Buffer) => void): Promise<StagedFile> {
    return this.#staging.stage(source, maxBytes, inspect);
  }

  discard(staged: StagedFile): Promise<void> {
    return this.#staging.discard(staged);
  }

  /** Always uploads, even when the object exists: that refreshes its LastModified, which the orphan sweeper judges by. */
  async commit(organizationId: string, staged: StagedFile): Promise<void> {
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.location.bucket, Key: this.keyOf(organizationId, staged.sha256), Body: verified(staged), ContentLength: staged.size },
        partSize: PART_SIZE,
        queueSize: 2,
        leavePartsOnError: false,
      });
      await upload.done();
    } finally {
      await this.#staging.discard(staged);
    }
  }

  async open({ organizationId, sha256 }: StoredDocument): Promise<AsyncIterable<Buffer>> {
    try {
      const { Body } = await this.client.send(new GetObjectCommand({ Bucket: this.location.bucket, Key: this.keyOf(organizationId, sha256) }));
      return Body as unknown as AsyncIterable<Buffer>;
    } catch (error) {
      if (isMissing(error)) throw new DocumentMissingError(`the stored file ${sha256} is missing`);
      throw error;
    }
  }

  /** Downloads the object into the staging folder (mode 0600); release() removes it. */
  async localCopy(document: StoredDocument): Promise<LocalCopy> {
    const path = join(this.#staging.dir, `download-${randomUUID()}`);
    await mkdir(this.#staging.dir, { recursive: true, mode: 0o700 });
    try {
      const collections = this.#collections;
      const body = await this.open(document);
      const file = createWriteStream(path, { mode: 0o600 });
      await (collections === undefined ? pipeline(body, file) : pipeline(body, countedFor(collections), file));
    } catch (error) {
      await rm(path, { force: true });
      throw error;
    }
    return { path, release: () => rm(path, { force: true }) };
  }

  async *committed(): AsyncIterable<StoredDocument & { modifiedMs: number }> {
    let ContinuationToken: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.location.prefix, ContinuationToken }));
      for (const object of page.Contents ?? []) {
        const [organizationId = "", sha256 = "", ...rest] = (object.Key ?? "").slice(this.location.prefix.length).split("/");
        if (rest.length === 0 && isDocumentName(organizationId, sha256)) {
          yield { organizationId, sha256, modifiedMs: object.LastModified?.getTime() ?? 0 };
        }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
  }

  /**
   * Checks LastModified again just before deleting. S3 has no atomic "delete if older than", so a
   * window of one round trip remains between the check and the delete: an upload of the very same
   * bytes, into the same organization, of an object unreferenced for an hour, landing in that window
   * would be deleted. The folder store has no such window.
   */
  async removeIfOlder(document: StoredDocument, beforeMs: number): Promise<boolean> {
    const Key = this.keyOf(document.organizationId, document.sha256);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.location.bucket, Key }));
      if ((head.LastModified?.getTime() ?? 0) >= beforeMs) return false;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key }));
    return true;
  }

  removeStagedBefore(beforeMs: number): Promise<number> {
    return this.#staging.removeBefore(beforeMs);
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/**
 * The staged file's bytes, counted on their way out: if there are not as many as were staged (the
 * file changed underneath), the stream fails before its end, so the upload is aborted, not completed.
 */
function verified(staged: StagedFile): Readable {
  let size = 0;
  const check = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      size += chunk.length;
      callback(size > staged.size ? new Error(`the staged file grew past its ${staged.size} bytes`) : null, chunk);
    },
    flush(callback: TransformCallback) {
      callback(size === staged.size ? null : new Error(`the staged file has ${size} bytes, expected ${staged.size}`));
    },
  });
  const source = createReadStream(staged.tempPath);
  source.on("error", (error) => check.destroy(error));
  // A failed upload destroys `check` and reads no further: the file is closed with it, or its
  // descriptor (and, once the staged file is removed, its disk space) would be held for good.
  check.once("close", () => source.destroy());
  return source.pipe(check);
}

/** Passes a download's chunks on, counted for young collections (see YoungCollections): only one frees their buffers. */
function countedFor(collections: YoungCollections): (source: AsyncIterable<Buffer>) => AsyncIterable<Buffer> {
  return async function* (source) {
    for await (const chunk of source) {
      collections.received(chunk.length);
      yield chunk;
    }
  };
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: string }).name;
  return name === "NoSuchKey" || name === "NotFound" || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;
}
