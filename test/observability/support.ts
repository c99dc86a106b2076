import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import pg from "pg";
import { inject } from "vitest";
import { PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { createServiceClients, remoteTransport, type ServiceClients } from "../../src/api/clients.ts";
import { exitOf, type MainProcess, startMain, waitForOutput } from "../support/main-process.ts";
import { sleep } from "../support/wait.ts";

/** Where a helper hands the cleanup of what it started: onTestFinished in a test, a list beforeAll's teardown runs. */
export type Cleanup = (task: () => Promise<void>) => void;

/** Cleanups for a beforeAll, and the teardown (newest first) that beforeAll returns. */
export function cleanups(): { add: Cleanup; run: () => Promise<void> } {
  const tasks: (() => Promise<void>)[] = [];
  return {
    add: (task) => void tasks.push(task),
    run: async () => {
      for (const task of tasks.splice(0).reverse()) await task();
    },
  };
}

export interface Service {
  main: MainProcess;
  edgeUrl: string;
  internalUrl: string;
  clients: ServiceClients;
}

/**
 * `node src/app/main.ts` on a database of its own (so its workers take only this test's runs) and a
 * DATA_DIR of its own; stopped and dropped after the file.
 */
export async function launchOnOwnDatabase(env: Record<string, string>, cleanup: Cleanup): Promise<MainProcess> {
  const databaseName = `docpipe_obs_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: inject("databaseServerUrl") });
  await admin.connect();
  await admin.query(`create database ${databaseName}`);
  const url = new URL(inject("databaseServerUrl"));
  url.pathname = `/${databaseName}`;
  const dataDir = await mkdtemp(join(tmpdir(), "docpipe-obs-"));
  const main = startMain({
    DATABASE_URL: url.toString(),
    DATA_DIR: dataDir,
    SIGNING_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
    CALLBACK_ALLOW_PRIVATE_NETWORKS: "true",
    WORKER_POLL_MS: "100",
    TASK_POOL_SIZE: "1",
    ...env,
  });
  cleanup(async () => {
    if (main.child.exitCode === null && main.child.signalCode === null) main.child.kill("SIGTERM");
    await exitOf(main.child);
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  });
  return main;
}

/** The operator's credential of startService's process when the test gives none: every management call shows one. */
export const OPERATOR_TOKEN = "observability-operator";

/** Every role in one process (see launchOnOwnDatabase), once it listens and its workers run. */
export async function startService(given: Record<string, string>, cleanup: Cleanup): Promise<Service> {
  const env = { INTERNAL_TOKEN: OPERATOR_TOKEN, ...given };
  const main = await launchOnOwnDatabase(env, cleanup);
  const [, internalPort] = await waitForOutput(main, /"port":(\d+)[^\n]*"msg":"internal Connect services listening"/);
  const [, edgePort] = await waitForOutput(main, /Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
  await waitForOutput(main, /workers started/);
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  return { main, edgeUrl: `http://127.0.0.1:${edgePort}`, internalUrl, clients: createServiceClients(remoteTransport(internalUrl, env.INTERNAL_TOKEN)) };
}

export interface TestPipe {
  organizationId: string;
  keyValue: string;
  pipeId: string;
}

/** A new organization with a key and an active pipe: trigger (txt, png), parse, then the callbacks given. */
export async function createPipe(clients: ServiceClients, callbackUrls: string[] = []): Promise<TestPipe> {
  const { organization } = await clients.workspaces.createOrganization({ name: "Observed", plan: "advanced" });
  const organizationId = organization!.id;
  const { keyValue } = await clients.keys.createKey({ organizationId, name: "observed key" });
  const { pipe } = await clients.pipes.createPipe({
    organizationId,
    name: "observed pipe",
    pipeline: create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["txt", "png"], maxSizeMb: 1 } } },
        { id: "parse", kind: { case: "parse", value: {} } },
        ...callbackUrls.map((url, index) => ({
          id: `callback-${index}`,
          kind: { case: "callback" as const, value: { url, retryCount: 0, timeoutSeconds: 5 } },
        })),
      ],
    }),
  });
  await clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  return { organizationId, keyValue, pipeId: pipe!.id };
}

/** Submits `content` as a file; resolves with the response. */
export function submit(
  edgeUrl: string,
  pipe: TestPipe,
  content: string | Uint8Array = `document ${randomUUID()}`,
  name = "document.txt",
  headers: Record<string, string> = {},
): Promise<Response> {
  const body = new FormData();
  body.append("file", new Blob([content], { type: "text/plain" }), name);
  return fetch(`${edgeUrl}/pipes/${pipe.pipeId}/trigger`, { method: "POST", headers: { ...headers, "x-api-key": pipe.keyValue }, body });
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** GET `path` on `url` with the headers given (Host included, which fetch cannot set). */
export function get(url: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}${path}`, { headers }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, type: String(response.headers["content-type"]), body }));
    });
    request.on("error", reject);
    request.end();
  });
}
