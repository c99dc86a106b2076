import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
import type { S3ClientConfig } from "@aws-sdk/client-s3";

export interface S3Target {
  /** `s3://bucket/prefix` for STORAGE_URL. */
  storageUrl: string;
  /** Environment a docpipe process needs to reach it. */
  env: Record<string, string>;
  /** The same, for an S3Store made in this process. */
  clientConfig: S3ClientConfig;
  /** A server given by S3_TEST_STORAGE_URL rather than the loopback s3rver. */
  external: boolean;
  stop(): Promise<void>;
}

/**
 * The S3 server the tests use. With S3_TEST_STORAGE_URL set (plus the standard AWS_* variables:
 * AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY),
 * that bucket, such as real S3 or MinIO; each call gets a prefix of its own. Otherwise a loopback
 * s3rver (the maintained `@20minutes/s3rver` fork, from npm) on a random port with a temporary folder.
 *
 * s3rver and the AWS SDK v3 disagree on one thing: for bucket-level requests (ListObjectsV2) the SDK
 * signs the path `/bucket/` and s3rver checks `/bucket`, so those signatures never match.
 * `allowMismatchedSignatures` lets them through; object requests are signed and checked as usual.
 */
export async function startS3(): Promise<S3Target> {
  const prefix = `docpipe-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const given = process.env.S3_TEST_STORAGE_URL;
  if (given !== undefined && given !== "") {
    const url = `${given.replace(/\/+$/, "")}/${prefix}`;
    const env = Object.fromEntries(Object.entries(process.env).filter(([name, value]) => name.startsWith("AWS_") && value !== undefined)) as Record<
      string,
      string
    >;
    return { storageUrl: url, env, clientConfig: {}, external: true, stop: async () => {} };
  }
  const directory = await mkdtemp(join(tmpdir(), "docpipe-s3rver-"));
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    allowMismatchedSignatures: true,
    configureBuckets: [{ name: "docpipe" }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
  return {
    storageUrl: `s3://docpipe/${prefix}`,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    clientConfig: { endpoint, region: "us-east-1", credentials, forcePathStyle: true },
    external: false,
    stop: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
