import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createServiceClients, inProcessTransport } from "../src/clients.ts";
import { createServices, serviceRoutes } from "../src/services/routes.ts";
import { SAMPLES } from "./formats/fixtures.ts";
import { testDatabase } from "./support/database.ts";
import { testDeps } from "./support/deps.ts";
import { createTenant, type Tenant } from "./support/edge.ts";

/** `node src/main.ts` with `env` over a minimal environment; collects its output. */
function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: { PATH: process.env.PATH, LOG_LEVEL: "info", PORT: "0", INTERNAL_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk));
  return { child, output };
}

async function exitOf(child: ChildProcess): Promise<number | null> {
  const [code] = await once(child, "exit");
  return code as number | null;
}

describe("bad configuration fails fast with one line naming the problem", () => {
  it.each([
    [{ PORT: "abc" }, /^docpipe: PORT must be an integer/],
    [{ INTERNAL_HOST: "0.0.0.0" }, /^docpipe: INTERNAL_TOKEN must be set when INTERNAL_HOST \("0\.0\.0\.0"\)/],
    [{ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing" }, /^docpipe: cannot connect to PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:1\/nothing/],
  ])("%o", async (env, message) => {
    const { child, output } = startMain(env);
    expect(await exitOf(child)).toBe(1);
    expect(output.stderr.trim().split("\n")).toHaveLength(1);
    expect(output.stderr).toMatch(message);
  });

  it("never prints a database password", async () => {
    const { child, output } = startMain({ DATABASE_URL: "postgres://postgres:hunter2@127.0.0.1:1/nothing" });
    await exitOf(child);
    expect(output.stderr).not.toContain("hunter2");
    expect(output.stderr).toContain("postgres:***@");
  });
});

describe("graceful shutdown", () => {
  let tenant: Tenant;
  let storageDir: string;
  beforeAll(async () => {
    tenant = await createTenant(createServiceClients(inProcessTransport(serviceRoutes(createServices(testDeps(await testDatabase()))))));
    storageDir = await mkdtemp(join(tmpdir(), "docpipe-main-"));
  });
  afterAll(() => rm(storageDir, { recursive: true, force: true }));

  it("on SIGTERM stops accepting, finishes the upload in flight, and exits 0", async () => {
    const { child, output } = startMain({ DATABASE_URL: inject("databaseUrl"), STORAGE_DIR: storageDir, DOCPIPE_ROLES: "edge,services" });
    while (!/Server listening at http:\/\/127\.0\.0\.1:\d+/.test(output.stdout)) {
      if (child.exitCode !== null) throw new Error(`main exited: ${output.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output.stdout)![1]);

    // Send the head of a multipart upload, then signal while the body is still coming.
    const boundary = "b0undary";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
    const tail = `\r\n--${boundary}--\r\n`;
    const upload = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: `/pipes/${tenant.pipeId}/trigger`,
      headers: { "x-api-key": tenant.keyValue, "content-type": `multipart/form-data; boundary=${boundary}` },
    });
    const response = once(upload, "response");
    upload.write(head);
    upload.write(SAMPLES.pdf.bytes.subarray(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    upload.end(Buffer.concat([SAMPLES.pdf.bytes.subarray(10), Buffer.from(tail)]));

    const [res] = (await response) as [import("node:http").IncomingMessage];
    let body = "";
    for await (const chunk of res) body += chunk;
    expect(res.statusCode).toBe(202);
    expect(JSON.parse(body).pipeId).toBe(tenant.pipeId);
    expect(await exitOf(child)).toBe(0);
    expect(output.stdout).toContain('"msg":"stopped"');
  });
});
