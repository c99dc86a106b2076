/**
 * Builds the console into console/dist when it is missing or older than its sources. Run by
 * `npm ci` (prepare), `npm start` and the console's browser tests; `--force` always builds.
 */
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { build } from "vite";

const CONSOLE_DIR = import.meta.dirname;
const ROOT = resolve(CONSOLE_DIR, "..");
/**
 * What the build reads: the console's sources, the generated service descriptors, the one service
 * module the console shares (the format list), the locked dependencies.
 */
const SOURCES = [
  join(CONSOLE_DIR, "src"),
  join(CONSOLE_DIR, "index.html"),
  join(CONSOLE_DIR, "vite.config.ts"),
  join(CONSOLE_DIR, "pdfjs-assets.ts"),
  join(ROOT, "gen"),
  join(ROOT, "src", "documents", "formats", "format-ids.ts"),
  join(ROOT, "package-lock.json"),
];
const BUILT = join(CONSOLE_DIR, "dist", "index.html");

async function newestChange(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  const times = await Promise.all(entries.filter((entry) => entry.isFile()).map(async (entry) => (await stat(join(entry.parentPath, entry.name))).mtimeMs));
  return Math.max(info.mtimeMs, ...times);
}

/** Whether console/dist is missing or older than anything it is built from. */
export async function consoleIsStale(): Promise<boolean> {
  const built = await stat(BUILT).then(
    (info) => info.mtimeMs,
    () => undefined,
  );
  if (built === undefined) return true;
  const sources = await Promise.all(SOURCES.map(newestChange));
  return Math.max(...sources) > built;
}

/**
 * A production build whatever NODE_ENV the caller runs with: Vite keeps a NODE_ENV that is already
 * set, and vitest (whose global setup builds the console) sets it to "test", which would give React's
 * development build and JSX transform.
 */
export async function buildConsole(): Promise<void> {
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({ configFile: join(CONSOLE_DIR, "vite.config.ts"), mode: "production" });
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
  }
}

/** Builds when stale; says so on stderr so that a slower first start is explained. */
export async function buildConsoleIfStale(): Promise<void> {
  if (!(await consoleIsStale())) return;
  const started = performance.now();
  await buildConsole();
  process.stderr.write(`docpipe: console built in ${Math.round(performance.now() - started)} ms\n`);
}

if (import.meta.main) {
  await (process.argv.includes("--force") ? buildConsole() : buildConsoleIfStale());
}
