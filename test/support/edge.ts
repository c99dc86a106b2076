import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { type HttpTrigger, PipelineSchema } from "../../gen/docpipe/v1/pipe_pb.js";
import { createServiceClients, type ServiceClients } from "../../src/api/clients.ts";
import { createDirectTransport } from "../../src/api/direct-transport.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { testDatabase } from "./database.ts";
import { testDeps } from "./deps.ts";
import { inProcessRoutes } from "./services.ts";

export interface EdgeHarness {
  url: string;
  clients: ServiceClients;
  store: FileStore;
  deps: ReturnType<typeof testDeps>;
  /** Closes the server and removes its storage folder: what the caller's beforeAll returns. */
  close(): Promise<void>;
}

/**
 * The whole edge on a real socket, over in-process services and the test file's own database, with its
 * own storage folder. One per test file (`beforeAll` returns its `close`); tests isolate themselves
 * with their own organizations.
 */
export async function startEdge(env: Record<string, string> = {}, redis?: Redis): Promise<EdgeHarness> {
  const db = await testDatabase();
  const deps = testDeps(db, env);
  const clients = createServiceClients(createDirectTransport(inProcessRoutes(deps)));
  const storageDir = await mkdtemp(join(tmpdir(), "docpipe-edge-"));
  const store = new FileStore(storageDir);
  await store.init();
  const app = await buildApp({ clients, store, redis, log: pino({ level: "silent" }), ready: async () => {}, settings: deps.config });
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  const close = async () => {
    await app.close();
    await rm(storageDir, { recursive: true, force: true });
  };
  return { url: address, clients, store, deps, close };
}

/** Trigger settings a test overrides; the rest default to pdf, png, txt and 1 MB. */
export type TriggerSettings = Partial<Pick<HttpTrigger, "allowedOrigins" | "acceptedFormats" | "maxSizeMb">>;

export interface Tenant {
  organizationId: string;
  defaultWorkspaceId: string;
  keyValue: string;
  keyId: string;
  pipeId: string;
}

/** A fresh organization with a key and an active pipe whose trigger has `trigger`'s settings. */
export async function createTenant(clients: ServiceClients, trigger: TriggerSettings = {}, plan = "advanced"): Promise<Tenant> {
  const { organization } = await clients.workspaces.createOrganization({ name: "Edge test", plan });
  const organizationId = organization!.id;
  const { key, keyValue } = await clients.keys.createKey({ organizationId, name: "edge test key" });
  const pipeId = await createActivePipe(clients, organizationId, trigger);
  return { organizationId, defaultWorkspaceId: organization!.defaultWorkspaceId, keyValue, keyId: key!.id, pipeId };
}

export async function createActivePipe(clients: ServiceClients, organizationId: string, trigger: TriggerSettings = {}, workspaceId = ""): Promise<string> {
  const { pipe } = await clients.pipes.createPipe({
    organizationId,
    workspaceId,
    name: "edge test pipe",
    pipeline: create(PipelineSchema, {
      nodes: [
        { id: "trigger", kind: { case: "httpTrigger", value: { acceptedFormats: ["pdf", "png", "txt"], maxSizeMb: 1, ...trigger } } },
        { id: "parse", kind: { case: "parse", value: {} } },
      ],
    }),
  });
  await clients.pipes.activatePipe({ organizationId, pipeId: pipe!.id });
  return pipe!.id;
}

/** Files under the store's root, staging included: what a rejected request must not leave. */
export async function storedFiles(store: FileStore): Promise<string[]> {
  const entries = await readdir(store.root, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}
