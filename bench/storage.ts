import { createHash, randomBytes, randomUUID } from "node:crypto";
import { copyFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseStorageUrl, S3Store } from "../src/data/storage/s3-store.ts";
import { createBenchDatabase } from "./support/database.ts";
import { clearStorage } from "./support/stored-files.ts";
import { runLoad, type ServerProcess } from "./support/processes.ts";
import { type BenchRow, MIB } from "./support/report.ts";
import { type S3Target, startS3 } from "../test/support/s3-server.ts";
import { spawnEdge, tempStorage, triggerUrl } from "./support/servers.ts";
import { benchTenant } from "./support/tenants.ts";

// The edge storing documents in an S3 server (s3rver on loopback, in this process) beside the same
// edge storing them in a local folder: what the object store costs a submission.

const CONNECTIONS = 16;
const WARMUP_MS = 1000;
const ROUND_MS = 3000;
const ROUNDS = 3;
const SIZES = [
  { label: "1 MiB", bytes: MIB },
  { label: "10 MiB", bytes: 10 * MIB },
];
const TARGET = 0.8;

/**
 * The S3 server's own ceiling: documents committed per second straight from staging by 16 concurrent
 * committers in this process (no edge, no database), which shares the machine with everything else.
 */
async function serverCeiling(s3: S3Target, stagingDir: string, bytes: number): Promise<number> {
  const store = new S3Store(parseStorageUrl(s3.storageUrl), stagingDir, s3.clientConfig);
  await store.init();
  const source = join(stagingDir, "source");
  const content = randomBytes(bytes);
  await writeFile(source, content);
  const sha256 = createHash("sha256").update(content).digest("hex");
  const organizationId = randomUUID();
  const started = performance.now();
  let committed = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() - started < ROUND_MS) {
        const tempPath = join(stagingDir, randomUUID());
        await copyFile(source, tempPath);
        await store.commit(organizationId, { tempPath, sha256, size: bytes });
        committed++;
      }
    }),
  );
  await store.close();
  return committed / ((performance.now() - started) / 1000);
}

export async function benchStorage(): Promise<BenchRow[]> {
  const bench = await createBenchDatabase();
  const folder = await tempStorage();
  const staging = await tempStorage();
  const s3 = await startS3();
  const rows: BenchRow[] = [];
  let servers: Record<"folder" | "s3", ServerProcess> | undefined;
  try {
    const tenant = await benchTenant(bench.clients, 20);
    servers = {
      folder: await spawnEdge(bench.url, folder.dir),
      s3: await spawnEdge(bench.url, staging.dir, [], { STORAGE_URL: s3.storageUrl, ...s3.env }),
    };
    for (const size of SIZES) {
      const spec = (server: ServerProcess, durationMs: number) => ({
        url: triggerUrl(server.url, tenant),
        headers: { "x-api-key": tenant.keyValue },
        fileSize: size.bytes,
        durationMs,
        connections: CONNECTIONS,
      });
      const best = { folder: 0, s3: 0 };
      for (const which of ["folder", "s3"] as const) await runLoad(spec(servers[which], WARMUP_MS));
      for (let round = 0; round < ROUNDS; round++) {
        await clearStorage(folder.dir);
        for (const which of round % 2 === 0 ? (["folder", "s3"] as const) : (["s3", "folder"] as const)) {
          const load = await runLoad(spec(servers[which], ROUND_MS));
          if (load.ok !== load.requests) throw new Error(`${which} store: non-2xx answers ${JSON.stringify(load.statuses)}: ${servers[which].stderr()}`);
          best[which] = Math.max(best[which], load.ok / (load.elapsedMs / 1000));
        }
      }
      rows.push(
        { name: `Throughput ${size.label}, S3 store (s3rver on loopback)`, value: Math.round(best.s3), unit: "req/s" },
        {
          name: `Commits ${size.label} straight to the S3 server, no edge (its ceiling here)`,
          value: Math.round(await serverCeiling(s3, staging.dir, size.bytes)),
          unit: "per s",
        },
        { name: `Throughput ${size.label}, folder store`, value: Math.round(best.folder), unit: "req/s" },
        {
          name: `Throughput ${size.label}: S3 store / folder store`,
          value: Math.round((best.s3 / best.folder) * 1000) / 1000,
          unit: "ratio",
          target: { op: ">=", value: TARGET },
        },
      );
    }
  } finally {
    await servers?.folder.stop();
    await servers?.s3.stop();
    await s3.stop();
    await folder.remove();
    await staging.remove();
    await bench.drop();
  }
  return rows;
}
