import { resolve } from "node:path";
import type { Kysely } from "kysely";
import type { Config } from "../../platform/config.ts";
import type { Logger } from "../../platform/logger.ts";
import { connectDatabase, connectedAsSuperuser, redactUrl } from "./connection.ts";
import { startEmbeddedPostgres } from "./embedded.ts";
import { migrateToLatest } from "./migrate.ts";
import type { Database } from "./schema.ts";

export interface OpenDatabase {
  db: Kysely<Database>;
  /** Connection URL, for connections outside the pool (LISTEN). */
  url: string;
  close(): Promise<void>;
}

/**
 * DATABASE_URL set: that server. Unset: an embedded PostgreSQL with its data in DATA_DIR/postgres,
 * started and stopped with this process, connected to as a role without superuser (SERVICE_ROLE).
 * Either way the schema is migrated to the latest version; a DATABASE_URL whose role is a superuser
 * gets a warning.
 */
export async function openDatabase(config: Config, log: Logger): Promise<OpenDatabase> {
  const embedded =
    config.databaseUrl === undefined
      ? await startEmbeddedPostgres({
          dir: resolve(config.dataDir, "postgres"),
          port: config.embeddedPostgresPort,
          database: "docpipe",
          log: (message) => log.debug({ postgres: message }, "embedded postgres"),
          warn: (message) => log.warn(message),
        })
      : undefined;
  const url = config.databaseUrl ?? embedded!.url;
  let db: Kysely<Database> | undefined;
  let applied: string[];
  try {
    db = await connectDatabase(url);
    if (embedded === undefined && (await connectedAsSuperuser(db))) {
      log.warn(
        "DATABASE_URL connects as a superuser: SQL that reaches the service could run commands on the database server; connect as a role without SUPERUSER that owns the database (docs/security.md)",
      );
    }
    applied = await migrateToLatest(db);
  } catch (error) {
    await db?.destroy();
    await embedded?.stop();
    throw error;
  }
  log.info({ database: redactUrl(url), embedded: embedded !== undefined, migrationsApplied: applied }, "database ready");
  return {
    db,
    url,
    close: async () => {
      await db.destroy();
      await embedded?.stop();
    },
  };
}
