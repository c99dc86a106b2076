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
  stop(): Promise<void>;
}

/**
 * The S3 server the storage benchmark compares the folder store against. With S3_TEST_STORAGE_URL set
 * (and the standard AWS_* variables), that bucket, under a prefix of this run's own. Otherwise an
 * s3rver on loopback (a random port, a temporary folder); bucket-level requests are signed by the AWS
 * SDK over `/bucket/` and checked by s3rver over `/bucket`, so `allowMismatchedSignatures` lets those through.
 */
export async function startS3(): Promise<S3Target> {
  const given = process.env.S3_TEST_STORAGE_URL;
  if (given !== undefined && given !== "") {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name, value]) => name.startsWith("AWS_") && value !== undefined)) as Record<
      string,
      string
    >;
    return { storageUrl: `${given.replace(/\/+$/, "")}/bench-${process.pid}`, env, clientConfig: {}, stop: async () => {} };
  }
  const directory = await mkdtemp(join(tmpdir(), "docpipe-bench-s3rver-"));
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
    storageUrl: `s3://docpipe/bench-${process.pid}`,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    clientConfig: { endpoint, region: "us-east-1", credentials, forcePathStyle: true },
    stop: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
