import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServiceClients } from "../src/api/clients.ts";
import { createDirectTransport } from "../src/api/direct-transport.ts";
import { SAMPLES } from "./formats/fixtures.ts";
import { testDatabase, testDatabaseUrl } from "./support/database.ts";
import { testDeps } from "./support/deps.ts";
import { exitOf, startMain, waitForOutput } from "./support/main-process.ts";
import { createTenant, type Tenant } from "./support/edge.ts";
import { inProcessRoutes } from "./support/services.ts";
import { sleep } from "./support/wait.ts";

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
    tenant = await createTenant(createServiceClients(createDirectTransport(inProcessRoutes(testDeps(await testDatabase())))));
    storageDir = await mkdtemp(join(tmpdir(), "docpipe-main-"));
  });
  afterAll(() => rm(storageDir, { recursive: true, force: true }));

  it("on SIGTERM stops accepting, finishes the upload in flight, and exits 0", async () => {
    const { child, output } = startMain({ DATABASE_URL: await testDatabaseUrl(), STORAGE_DIR: storageDir, DOCPIPE_ROLES: "edge,services" });
    while (!/Server listening at http:\/\/127\.0\.0\.1:\d+/.test(output.stdout)) {
      if (child.exitCode !== null) throw new Error(`main exited: ${output.stderr}`);
      await sleep(50);
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
    await sleep(300);
    child.kill("SIGTERM");
    await sleep(200);
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

describe("npm start's Node flags", () => {
  it.each([
    ["as npm start runs it (--expose-gc --no-memory-reducer): no warning", undefined, undefined],
    ["without them: a warning that names both", [], "started without --expose-gc and --no-memory-reducer:"],
    ["with --expose-gc alone: a warning that names the other", ["--expose-gc"], "started without --no-memory-reducer:"],
  ])("an edge started %s", async (_, nodeFlags, warning) => {
    const storageDir = await mkdtemp(join(tmpdir(), "docpipe-main-"));
    const { child, output } = startMain({ DATABASE_URL: await testDatabaseUrl(), STORAGE_DIR: storageDir, DOCPIPE_ROLES: "edge,services" }, { nodeFlags });
    try {
      await waitForOutput({ child, output }, /Server listening at/);
      if (warning === undefined) expect(output.stdout).not.toContain("started without");
      else expect(output.stdout).toContain(warning);
    } finally {
      child.kill("SIGTERM");
      await exitOf(child);
      await rm(storageDir, { recursive: true, force: true });
    }
  });
});

describe("shutdown with a slow upload in flight", () => {
  let tenant: Tenant;
  let storageDir: string;
  beforeAll(async () => {
    tenant = await createTenant(createServiceClients(createDirectTransport(inProcessRoutes(testDeps(await testDatabase())))), { maxSizeMb: 10 });
    storageDir = await mkdtemp(join(tmpdir(), "docpipe-main-"));
  });
  afterAll(() => rm(storageDir, { recursive: true, force: true }));

  it("on SIGTERM, at SHUTDOWN_TIMEOUT_MS the upload is cut, its staged file removed, the database closed, exit 0", async () => {
    // No worker role: a worker here would claim other test files' runs in the shared database.
    const { child, output } = startMain({
      DATABASE_URL: await testDatabaseUrl(),
      STORAGE_DIR: storageDir,
      SHUTDOWN_TIMEOUT_MS: "1000",
      DOCPIPE_ROLES: "edge,services",
    });
    while (!/Server listening at http:\/\/127\.0\.0\.1:\d+/.test(output.stdout)) {
      if (child.exitCode !== null) throw new Error(`main exited: ${output.stderr}`);
      await sleep(50);
    }
    const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output.stdout)![1]);

    // Like `curl --limit-rate 20k`: a 5 MB upload sent at about 20 KB/s.
    const boundary = "b0undary";
    const upload = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: `/pipes/${tenant.pipeId}/trigger`,
      headers: { "x-api-key": tenant.keyValue, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": 5 * 1024 * 1024 },
    });
    const failed = new Promise((resolve) => upload.on("error", resolve));
    upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`);
    upload.write(SAMPLES.pdf.bytes);
    const drip = setInterval(() => upload.write(Buffer.alloc(2048, 0x20)), 100);
    const staged = join(storageDir, "tmp");
    while ((await readdir(staged)).length === 0) await sleep(50);

    const signalled = performance.now();
    child.kill("SIGTERM");
    const code = await exitOf(child);
    const took = performance.now() - signalled;
    clearInterval(drip);
    await failed;
    expect(code).toBe(0);
    expect(took).toBeGreaterThanOrEqual(900);
    expect(output.stderr).not.toContain("shutdown took longer");
    expect(output.stdout).toContain("cutting the uploads still in flight");
    expect(output.stdout).toContain('"msg":"stopped"');
    expect(await readdir(staged)).toEqual([]);
  });
});
