import { mkdtemp, rm } from "node:fs/promises";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import type { ServiceClients } from "../../src/api/clients.ts";
import { buildApp } from "../../src/inbound/http/app.ts";
import { FileStore } from "../../src/data/storage/file-store.ts";
import { BENCH_ENV } from "./database.ts";
import { startScriptNodeFlags } from "./start-flags.ts";
import { noteRemoval } from "./stored-files.ts";
import type { Tenant } from "./tenants.ts";
import { freePort, type ServerProcess, type SpawnOptions, spawnServer } from "./processes.ts";

export function triggerUrl(serverUrl: string, tenant: Tenant): string {
  return `${serverUrl}/pipes/${tenant.pipeId}/trigger`;
}

/** A temporary storage folder, removed by the returned function. */
export async function tempStorage(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "docpipe-bench-"));
  return {
    dir,
    remove: async () => {
      await rm(dir, { recursive: true, force: true });
      await noteRemoval();
    },
  };
}

/**
 * The edge as `npm start` runs it (its Node flags; src/app/main.ts: edge and in-process services, no
 * worker), in its own process. Request logs are off (LOG_LEVEL=warn), as the bare server has none either.
 */
export async function spawnEdge(
  databaseUrl: string,
  storageDir: string,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ServerProcess> {
  const port = await freePort();
  return spawnServer(
    "src/app/main.ts",
    port,
    {
      ...BENCH_ENV,
      DATABASE_URL: databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(port),
      INTERNAL_PORT: "0",
      DOCPIPE_ROLES: "edge,services",
      STORAGE_DIR: storageDir,
      DATA_DIR: storageDir,
      LOG_LEVEL: "warn",
      SEED_DEMO: "false",
      ...env,
    },
    [...startScriptNodeFlags(), ...nodeArgs],
    options,
  );
}

/** The bare baseline (bare-server.ts) in its own process; it serves POST /upload. */
export async function spawnBare(
  databaseUrl: string,
  storageDir: string,
  organizationId: string,
  nodeArgs: string[] = [],
  options: SpawnOptions = {},
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const port = await freePort();
  return spawnServer(
    "bench/support/bare-server.ts",
    port,
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      STORAGE_DIR: storageDir,
      ORGANIZATION_ID: organizationId,
      ...env,
    },
    nodeArgs,
    options,
  );
}

export interface InProcessEdge {
  url: string;
  /** Bytes each closed connection had read from its client, by the client's port. */
  closedSocketBytesRead: Map<number, number>;
  close(): Promise<void>;
}

/** The edge in this process on a real port, with a hook on its sockets to count the bytes it read. */
export async function startEdgeInProcess(clients: ServiceClients, storageDir: string): Promise<InProcessEdge> {
  const store = new FileStore(storageDir);
  await store.init();
  const app = await buildApp({ clients, store, log: pino({ level: "silent" }), ready: async () => {} });
  const closedSocketBytesRead = new Map<number, number>();
  app.server.on("connection", (socket: Socket) => {
    const clientPort = socket.remotePort!;
    socket.on("close", () => closedSocketBytesRead.set(clientPort, socket.bytesRead));
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { url, closedSocketBytesRead, close: () => app.close() };
}
