import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createServiceClients, remoteTransport, type ServiceClients } from "../src/api/clients.ts";
import { connectDatabase } from "../src/data/db/connection.ts";
import type { Database } from "../src/data/db/schema.ts";
import { parseStorageUrl, S3Store } from "../src/data/storage/s3-store.ts";
import { readDocument } from "./support/documents.ts";
import { createTenant, type Tenant } from "./support/edge.ts";
import { exitOf, type MainProcess, startMain, waitForOutput } from "./support/main-process.ts";
import { type S3Target, startS3 } from "./support/s3-server.ts";
import { sleep } from "./support/wait.ts";

/**
 * Several machines, played by processes that share nothing but PostgreSQL, Redis and an S3 server:
 * one services process, two edges, two workers, each with an empty DATA_DIR of its own.
 */
const redisUrl = process.env.REDIS_URL;

interface Accepted {
  runId: string;
  sha256: string;
  text: string;
}

describe.skipIf(redisUrl === undefined)("several processes sharing PostgreSQL, Redis and S3 (REDIS_URL)", { timeout: 120_000 }, () => {
  const databaseName = `docpipe_topology_${randomBytes(4).toString("hex")}`;
  let admin: pg.Client;
  let databaseUrl: string;
  let db: Kysely<Database>;
  let s3: S3Target;
  let dataDirs: string;
  let clients: ServiceClients;
  let store: S3Store;
  const processes: MainProcess[] = [];
  let edges: { main: MainProcess; url: string }[] = [];
  let workers: MainProcess[] = [];
  const accepted: Accepted[] = [];

  const OPERATOR_TOKEN = "topology-operator";

  function launch(role: string, env: Record<string, string>): Promise<MainProcess> {
    return mkdtemp(join(dataDirs, `${role}-`)).then((dataDir) => {
      const main = startMain({
        DATABASE_URL: databaseUrl,
        STORAGE_URL: s3.storageUrl,
        ...s3.env,
        REDIS_URL: redisUrl!,
        DATA_DIR: dataDir,
        SIGNING_SECRETS_KEY: Buffer.alloc(32, 7).toString("base64"),
        PAGE_TOKEN_SECRET: "topology",
        // Over the network the edges need TRIGGER_TOKEN and the test manages as the operator.
        INTERNAL_TOKEN: OPERATOR_TOKEN,
        TRIGGER_TOKEN: "topology-edge",
        PLANS: '{"unlimited":0,"hundred":100}',
        RUN_LEASE_SECONDS: "2",
        WORKER_POLL_MS: "200",
        ...env,
      });
      processes.push(main);
      return main;
    });
  }

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: inject("databaseServerUrl") });
    await admin.connect();
    await admin.query(`create database ${databaseName}`);
    const url = new URL(inject("databaseServerUrl"));
    url.pathname = `/${databaseName}`;
    databaseUrl = url.toString();
    s3 = await startS3();
    dataDirs = await mkdtemp(join(tmpdir(), "docpipe-topology-"));

    // Services and both workers start at once on an empty database: they migrate it together.
    const [services, ...workerProcesses] = await Promise.all([
      launch("services", { DOCPIPE_ROLES: "services" }),
      launch("worker", { DOCPIPE_ROLES: "worker" }),
      launch("worker", { DOCPIPE_ROLES: "worker" }),
    ]);
    workers = workerProcesses;
    const [, internalPort] = await waitForOutput(services!, /"port":(\d+)[^\n]*"msg":"internal Connect services listening"/);
    const servicesUrl = `http://127.0.0.1:${internalPort}`;
    const edgeProcesses = await Promise.all([0, 1].map(() => launch("edge", { DOCPIPE_ROLES: "edge", SERVICES_URL: servicesUrl, DATABASE_URL: "" })));
    edges = await Promise.all(
      edgeProcesses.map(async (main) => {
        const [, port] = await waitForOutput(main, /Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
        return { main, url: `http://127.0.0.1:${port}` };
      }),
    );
    await Promise.all(workers.map((worker) => waitForOutput(worker, /workers started/)));

    clients = createServiceClients(remoteTransport(servicesUrl, OPERATOR_TOKEN));
    db = await connectDatabase(databaseUrl, { max: 2 });
    store = new S3Store(parseStorageUrl(s3.storageUrl), join(dataDirs, "reader"), s3.clientConfig);
  });

  afterAll(async () => {
    for (const main of processes) if (main.child.exitCode === null && main.child.signalCode === null) main.child.kill("SIGTERM");
    await Promise.all(processes.map((main) => exitOf(main.child)));
    await store?.close();
    await db?.destroy();
    await admin.query(`drop database if exists ${databaseName} with (force)`);
    await admin.end();
    await s3?.stop();
    await rm(dataDirs, { recursive: true, force: true });
  });

  async function submit(edgeUrl: string, tenant: Tenant): Promise<{ status: number; accepted?: Accepted }> {
    const text = `document ${randomUUID()}`;
    const body = new FormData();
    body.append("file", new Blob([text], { type: "text/plain" }), "document.txt");
    try {
      const response = await fetch(`${edgeUrl}/pipes/${tenant.pipeId}/trigger`, { method: "POST", headers: { "x-api-key": tenant.keyValue }, body });
      const json = (await response.json()) as { runId?: string; file?: { sha256: string } };
      if (response.status !== 202) return { status: response.status };
      const result = { runId: json.runId!, sha256: json.file!.sha256, text };
      accepted.push(result);
      return { status: 202, accepted: result };
    } catch {
      return { status: 0 }; // connection refused or reset: not accepted
    }
  }

  /** `count` submissions from `concurrency` clients, alternating between the edges given. */
  async function submitMany(edgeUrls: string[], tenant: Tenant, count: number, concurrency = 16) {
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) {
          const index = next++;
          statuses.push((await submit(edgeUrls[index % edgeUrls.length]!, tenant)).status);
        }
      }),
    );
    return statuses;
  }

  async function waitUntilFinished(runIds: string[], timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = await db.selectFrom("runs").select(["id", "status", "error"]).where("id", "in", runIds).execute();
      if (rows.length === runIds.length && rows.every((row) => row.status === "completed" || row.status === "failed")) return rows;
      if (Date.now() > deadline) throw new Error(`runs unfinished after ${timeoutMs} ms: ${rows.filter((row) => row.status !== "completed").length}`);
      await sleep(200);
    }
  }

  /** How many times the workers' logs say each run finished. */
  function finishedCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const worker of workers) {
      for (const line of worker.output.stdout.split("\n")) {
        if (!line.includes('"msg":"run finished"')) continue;
        const { runId } = JSON.parse(line) as { runId: string };
        counts.set(runId, (counts.get(runId) ?? 0) + 1);
      }
    }
    return counts;
  }

  it("500 submissions over both edges: 500 runs, each completed exactly once, each parse output its document's text", async () => {
    const tenant = await createTenant(clients, { acceptedFormats: ["txt"] }, "unlimited");
    const before = accepted.length;
    const statuses = await submitMany(
      edges.map((edge) => edge.url),
      tenant,
      500,
    );
    expect(statuses.filter((status) => status === 202)).toHaveLength(500);
    const mine = accepted.slice(before);
    const runIds = mine.map((submission) => submission.runId);
    expect(new Set(runIds).size).toBe(500);
    const rows = await waitUntilFinished(runIds);
    expect(rows.filter((row) => row.status !== "completed")).toEqual([]);
    const outputs = await db.selectFrom("run_steps").select(["run_id", "output"]).where("run_id", "in", runIds).where("node_type", "=", "parse").execute();
    const textByRun = new Map(outputs.map((row) => [row.run_id, (row.output as { text: string }).text]));
    for (const submission of mine) expect(textByRun.get(submission.runId)).toBe(submission.text);
    const finished = finishedCounts();
    expect(runIds.filter((runId) => finished.get(runId) !== 1)).toEqual([]);
  });

  it("a plan of 100 requests per minute holds across both edges: exactly 100 accepted", async () => {
    const tenant = await createTenant(clients, { acceptedFormats: ["txt"] }, "hundred");
    const statuses = await submitMany(
      edges.map((edge) => edge.url),
      tenant,
      130,
      8,
    );
    expect(statuses.filter((status) => status === 202)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
  });

  it("SIGKILL of a worker mid-run: every run still completes", async () => {
    const tenant = await createTenant(clients, { acceptedFormats: ["txt"] }, "unlimited");
    const before = accepted.length;
    const submitting = submitMany(
      edges.map((edge) => edge.url),
      tenant,
      150,
      8,
    );
    const victim = workers[0]!;
    // Killed while it holds a run.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const { n } = await db
        .selectFrom("runs")
        .select(db.fn.countAll<string>().as("n"))
        .where("status", "=", "running")
        .where("lease_owner", "like", `%:${victim.child.pid}:%`)
        .executeTakeFirstOrThrow();
      if (Number(n) > 0) break;
      if (Date.now() > deadline) throw new Error("the worker never held a run");
      await sleep(5);
    }
    victim.child.kill("SIGKILL");
    expect((await submitting).filter((status) => status === 202)).toHaveLength(150);
    const runIds = accepted.slice(before).map((submission) => submission.runId);
    const rows = await waitUntilFinished(runIds);
    expect(rows.filter((row) => row.status !== "completed")).toEqual([]);
  });

  it("SIGTERM of an edge under load: no accepted submission is lost, the other edge keeps accepting", async () => {
    const tenant = await createTenant(clients, { acceptedFormats: ["txt"] }, "unlimited");
    const before = accepted.length;
    const [leaving, staying] = edges;
    const submitting = submitMany([leaving!.url, staying!.url], tenant, 200, 8);
    await sleep(300);
    leaving!.main.child.kill("SIGTERM");
    const statuses = await submitting;
    expect(await exitOf(leaving!.main.child)).toBe(0);
    expect(statuses.filter((status) => status === 202).length).toBeGreaterThan(100);
    expect(statuses.every((status) => status === 202 || status === 503 || status === 0)).toBe(true);
    const after = await submitMany([staying!.url], tenant, 20, 4);
    expect(after.every((status) => status === 202)).toBe(true);
    const rows = await waitUntilFinished(accepted.slice(before).map((submission) => submission.runId));
    expect(rows.filter((row) => row.status !== "completed")).toEqual([]);
  });

  it("every 2xx has its run, its file row and its object, whose sha256 matches", async () => {
    // 500 + 100 + 150 + at least 100 + 20
    expect(accepted.length).toBeGreaterThan(870);
    const rows = await db
      .selectFrom("runs")
      .innerJoin("files", "files.id", "runs.file_id")
      .select(["runs.id", "files.organization_id", "files.sha256"])
      .where(
        "runs.id",
        "in",
        accepted.map((submission) => submission.runId),
      )
      .execute();
    const byRun = new Map(rows.map((row) => [row.id, row]));
    const problems: string[] = [];
    for (const submission of accepted) {
      const row = byRun.get(submission.runId);
      if (row?.sha256 !== submission.sha256) {
        problems.push(`${submission.runId}: no run or file row`);
        continue;
      }
      const bytes = await readDocument(store, { organizationId: row.organization_id, sha256: row.sha256 }).catch((error: Error) => error);
      if (bytes instanceof Error) problems.push(`${submission.runId}: ${bytes.message}`);
      else if (bytes.toString() !== submission.text) problems.push(`${submission.runId}: other bytes`);
    }
    expect(problems).toEqual([]);
  });
});
