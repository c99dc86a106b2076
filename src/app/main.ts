// First: when tracing is configured, the SDK must run before the modules it instruments load.
import "../platform/observability/register.ts";
import { type Config, ConfigError, loadConfig } from "../platform/config.ts";
import { createLogger, oneLine } from "../platform/logger.ts";
import { stopTracing } from "../platform/observability/tracing.ts";
import type { Running } from "./start.ts";

// Loaded after register.ts has run: its imports (http, Fastify, pg) are what tracing instruments.
const { start } = await import("./start.ts");

/** Every start-up failure ends here: one line on stderr, exit code 1, never a stack trace. */
function fail(message: string): never {
  process.stderr.write(`docpipe: ${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

const log = createLogger(config.logLevel);
// Signals are handled from the start: one that arrives while the process is still starting stops
// it once it has started, rather than killing it half-way.
const starting: Promise<Running> = start(config, log);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down: finishing in-flight requests");
  const timer = setTimeout(() => fail("shutdown took longer than SHUTDOWN_TIMEOUT_MS; exiting"), config.shutdownTimeoutMs + 5000);
  timer.unref();
  // A start that fails exits on its own (below), with its one line.
  const running = await starting.catch(() => new Promise<never>(() => {}));
  try {
    await running.stop();
    await stopTracing();
  } catch (error) {
    fail(`shutdown failed: ${oneLine(error)}`);
  }
  log.info("stopped");
  process.exit(0);
}
// Every signal, not only the first: Ctrl-C under `npm start` sends SIGINT twice (the terminal's, and
// npm's forward of it), and a second one left to Node's default ended the shutdown half-way.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(signal));

await starting.catch((error: unknown) => fail(oneLine(error)));
