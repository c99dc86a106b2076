import { type Config, ConfigError, loadConfig } from "../platform/config.ts";
import { openDatabase } from "../data/db/open.ts";
import { createLogger, oneLine } from "../platform/logger.ts";

/**
 * `npm run migrate`: brings the database (DATABASE_URL, or the embedded one) to the latest schema
 * and exits, for deployments that migrate as a step before starting processes. Processes migrate at
 * start too; the migrator holds a PostgreSQL advisory lock, so concurrent runs apply each migration once.
 */
let config: Config;
try {
  config = loadConfig();
} catch (error) {
  process.stderr.write(`docpipe migrate: ${error instanceof ConfigError ? error.message : oneLine(error)}\n`);
  process.exit(1);
}
try {
  const database = await openDatabase(config, createLogger(config.logLevel));
  await database.close();
} catch (error) {
  process.stderr.write(`docpipe migrate: ${oneLine(error)}\n`);
  process.exit(1);
}
