import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { needs } from "../src/app/start.ts";
import { loadConfig } from "../src/platform/config.ts";
import { ORPHAN_GRACE_MS } from "../src/data/storage/sweep-orphans.ts";
import { testDatabaseUrl } from "./support/database.ts";
import { startS3 } from "./support/s3-server.ts";
import { childrenOf, exitOf, listeningPorts, type MainProcess, occupiedPort, startMain, waitForOutput } from "./support/main-process.ts";

const databaseUrl = await testDatabaseUrl();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "docpipe-start-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The process exits 1 with exactly one line on stderr, matching `message`, and no stack trace. */
async function expectOneLineFailure(env: Record<string, string>, message: RegExp): Promise<MainProcess> {
  const main = startMain(env);
  expect(await exitOf(main.child)).toBe(1);
  const lines = main.output.stderr.trim().split("\n");
  expect(lines, main.output.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^docpipe: /);
  expect(lines[0]).toMatch(message);
  expect(main.output.stderr).not.toMatch(/\n\s+at |Emitted 'error' event/);
  return main;
}

describe("every start-up failure is one clear line on stderr and exit code 1", () => {
  it("LOG_LEVEL=verbose", async () => {
    await expectOneLineFailure({ LOG_LEVEL: "verbose" }, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/);
  });

  // An unreachable DATABASE_URL: test/main.test.ts.

  it("an unwritable DATA_DIR", async () => {
    const file = join(dir, "a-file");
    await writeFile(file, "");
    await expectOneLineFailure({ DATA_DIR: join(file, "data") }, new RegExp(`DATA_DIR ${join(file, "data")}: .*(ENOTDIR|not a directory)`));
  });

  it("a STORAGE_URL whose S3 endpoint does not answer", async () => {
    await expectOneLineFailure(
      {
        DOCPIPE_ROLES: "edge",
        SERVICES_URL: "http://127.0.0.1:1",
        DATA_DIR: join(dir, "s3-edge"),
        STORAGE_URL: "s3://documents/prod",
        AWS_ENDPOINT_URL_S3: "http://127.0.0.1:1",
        AWS_REGION: "us-east-1",
        AWS_ACCESS_KEY_ID: "id",
        AWS_SECRET_ACCESS_KEY: "secret",
        AWS_MAX_ATTEMPTS: "1",
      },
      /^docpipe: STORAGE_URL: cannot reach bucket documents at http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
    );
  });

  it("the edge's PORT in use", async () => {
    const { port, server } = await occupiedPort();
    try {
      await expectOneLineFailure(
        { DATABASE_URL: databaseUrl, STORAGE_DIR: join(dir, "files"), DOCPIPE_ROLES: "edge,services", PORT: String(port) },
        new RegExp(`PORT ${port}: .*EADDRINUSE`),
      );
    } finally {
      server.close();
    }
  });

  it("the INTERNAL_PORT in use", async () => {
    const { port, server } = await occupiedPort();
    try {
      await expectOneLineFailure(
        { DATABASE_URL: databaseUrl, DOCPIPE_ROLES: "services", INTERNAL_PORT: String(port) },
        new RegExp(`INTERNAL_PORT ${port}: .*EADDRINUSE`),
      );
    } finally {
      server.close();
    }
  });

  it("an EMAIL_PORT in use", { timeout: 60_000 }, async () => {
    const { port, server } = await occupiedPort();
    try {
      await expectOneLineFailure(
        { DATABASE_URL: databaseUrl, STORAGE_DIR: join(dir, "files"), DOCPIPE_ROLES: "edge,services", PORT: "0", INTERNAL_PORT: "0", EMAIL_PORT: String(port) },
        new RegExp(`EMAIL_PORT ${port}: .*EADDRINUSE`),
      );
    } finally {
      server.close();
    }
  });

  it("the embedded PostgreSQL's port in use", { timeout: 60_000 }, async () => {
    const { port, server } = await occupiedPort();
    let relocated: string | undefined;
    try {
      const main = await expectOneLineFailure(
        { DATA_DIR: join(dir, "embedded"), EMBEDDED_POSTGRES_PORT: String(port), LOG_LEVEL: "warn" },
        new RegExp(`embedded PostgreSQL did not start on 127\\.0\\.0\\.1:${port}: .*set EMBEDDED_POSTGRES_PORT`),
      );
      // As root, the cluster was kept where the postgres user can reach it (this test's folder is 0700).
      relocated = /keeping the embedded cluster in (\S+) instead/.exec(main.output.stdout)?.[1];
    } finally {
      server.close();
      if (relocated !== undefined) await rm(relocated, { recursive: true, force: true });
    }
  });
});

describe("the embedded PostgreSQL's port", () => {
  it("without EMBEDDED_POSTGRES_PORT, a taken 54329 is no failure: the server listens on a port the system picks, and says which", {
    timeout: 90_000,
  }, async (context) => {
    const holder = createServer();
    holder.on("error", () => {});
    holder.listen(54329, "127.0.0.1");
    const held = await once(holder, "listening").then(
      () => true,
      () => false,
    );
    // Whatever else holds it (an outgoing connection's port, another test's server) may let it go
    // before the process tries it: then no warning comes, and the test would wait for one in vain.
    context.skip(!held, "127.0.0.1:54329 is held by something else on this machine");
    const main = startMain({ DATA_DIR: join(dir, "embedded-default-port"), SEED_DEMO: "false" });
    let relocated: string | undefined;
    try {
      const [, port] = await waitForOutput(
        main,
        /127\.0\.0\.1:54329 is taken: the embedded PostgreSQL listens on 127\.0\.0\.1:(\d+) \(set EMBEDDED_POSTGRES_PORT/,
        60_000,
      );
      expect(Number(port)).not.toBe(54329);
      await waitForOutput(main, /Server listening at http:\/\/127\.0\.0\.1:\d+/, 60_000);
      expect(main.output.stdout).toMatch(new RegExp(`"database":"postgres://docpipe:\\*\\*\\*@127\\.0\\.0\\.1:${port}/docpipe".*"msg":"database ready"`));
      relocated = /keeping the embedded cluster in (\S+) instead/.exec(main.output.stdout)?.[1];
    } finally {
      main.child.kill("SIGTERM");
      holder.close();
    }
    // What the process said, should it not exit cleanly (it once exited 1 here on a loaded host).
    expect(await exitOf(main.child), `${main.output.stderr}\n${main.output.stdout.slice(-4000)}`).toBe(0);
    // Stopped as it starts (the parse pool's self-check may still run): nothing is logged as an error.
    expect(main.output.stdout).not.toMatch(/"level":50/);
    if (relocated !== undefined) await rm(relocated, { recursive: true, force: true });
  });
});

describe("roles start only what they need", () => {
  it("decides per role combination", () => {
    const of = (env: Record<string, string>) => needs(loadConfig({ DATA_DIR: dir, ...env }));
    expect(of({ DOCPIPE_ROLES: "edge", SERVICES_URL: "http://services:8081" })).toEqual({ database: false, services: false, store: true, dataDir: false });
    expect(of({ DOCPIPE_ROLES: "edge" })).toMatchObject({ database: true, services: true, store: true });
    expect(of({ DOCPIPE_ROLES: "services", DATABASE_URL: "postgres://h/db", SIGNING_SECRETS_KEY: Buffer.alloc(32).toString("base64") })).toEqual({
      database: true,
      services: true,
      store: false,
      dataDir: false,
    });
    expect(of({ DOCPIPE_ROLES: "email", EMAIL_PORT: "0", SERVICES_URL: "http://services:8081" })).toEqual({
      database: false,
      services: false,
      store: true,
      dataDir: false,
    });
    expect(of({ DOCPIPE_ROLES: "worker", DATABASE_URL: "postgres://h/db", STORAGE_URL: "s3://b" })).toMatchObject({
      database: true,
      services: false,
      store: true,
      dataDir: true,
    });
  });

  it("an edge-only process with SERVICES_URL opens no database, starts no embedded server, migrates and seeds nothing", async () => {
    const dataDir = join(dir, "edge-only");
    // No DATABASE_URL: anything that wanted a database would start an embedded server and seed demo data.
    const main = startMain({ DOCPIPE_ROLES: "edge", SERVICES_URL: "http://127.0.0.1:1", DATA_DIR: dataDir });
    try {
      await waitForOutput(main, /Server listening at http:\/\/127\.0\.0\.1:\d+/);
      expect(main.output.stdout).not.toMatch(/database ready|first start|internal Connect services listening|workers started/);
      expect(existsSync(join(dataDir, "postgres"))).toBe(false);
      expect(childrenOf(main.child.pid!)).toEqual([]);
    } finally {
      main.child.kill("SIGTERM");
    }
    expect(await exitOf(main.child)).toBe(0);
  });

  it("an edge with S3 storage removes its own stale staging files at start", async () => {
    const s3 = await startS3();
    const dataDir = join(dir, "edge-s3");
    await mkdir(join(dataDir, "staging"), { recursive: true });
    const [stale, fresh] = [join(dataDir, "staging", "stale"), join(dataDir, "staging", "fresh")];
    await writeFile(stale, "left by a crash");
    await writeFile(fresh, "an upload in flight");
    const old = new Date(Date.now() - ORPHAN_GRACE_MS - 60_000);
    await utimes(stale, old, old);
    const main = startMain({ DOCPIPE_ROLES: "edge", SERVICES_URL: "http://127.0.0.1:1", DATA_DIR: dataDir, STORAGE_URL: s3.storageUrl, ...s3.env });
    try {
      await waitForOutput(main, /"removed":\{"committed":0,"staged":1\},"msg":"orphan files swept"/);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(fresh)).toBe(true);
    } finally {
      main.child.kill("SIGTERM");
      await exitOf(main.child);
      await s3.stop();
    }
  });

  it("an email-only process (DOCPIPE_ROLES=email) runs the email trigger's SMTP server and no edge", async () => {
    const main = startMain({
      DOCPIPE_ROLES: "email",
      SERVICES_URL: "http://127.0.0.1:1",
      EMAIL_PORT: "0",
      EMAIL_HOST: "127.0.0.1",
      DATA_DIR: join(dir, "email-only"),
    });
    try {
      const port = Number((await waitForOutput(main, /"port":(\d+),"domain":"localhost","msg":"email trigger listening"/))[1]);
      expect(listeningPorts(main.child.pid!)).toEqual([port]);
      expect(main.output.stdout).not.toMatch(/Server listening|internal Connect services listening|workers started/);
      const socket = connect(port, "127.0.0.1");
      const [greeting] = (await once(socket, "data")) as [Buffer];
      expect(greeting.toString()).toMatch(/^220 /);
      socket.destroy();
    } finally {
      main.child.kill("SIGTERM");
    }
    expect(await exitOf(main.child)).toBe(0);
  });

  it("a worker-only process listens on no port", async () => {
    const main = startMain({ DOCPIPE_ROLES: "worker", DATABASE_URL: databaseUrl, STORAGE_DIR: join(dir, "worker-files"), DATA_DIR: join(dir, "worker") });
    try {
      await waitForOutput(main, /workers started/);
      expect(listeningPorts(main.child.pid!)).toEqual([]);
      expect(main.output.stdout).not.toMatch(/Server listening|internal Connect services listening/);
    } finally {
      main.child.kill("SIGTERM");
    }
    expect(await exitOf(main.child)).toBe(0);
  });

  it("npm run migrate migrates and exits 0; a bad DATABASE_URL is one line and exit 1", async () => {
    const ok = startMain({ DATABASE_URL: databaseUrl }, { entry: "src/app/migrate.ts" });
    expect(await exitOf(ok.child)).toBe(0);
    expect(ok.output.stdout).toMatch(/"msg":"database ready"/);
    const bad = startMain({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nothing" }, { entry: "src/app/migrate.ts" });
    expect(await exitOf(bad.child)).toBe(1);
    expect(bad.output.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^docpipe migrate: cannot connect to PostgreSQL/)]);
  });
});
