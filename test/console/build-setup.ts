import { buildConsoleIfStale } from "../../console/build.ts";

/**
 * The console's browser tests serve the built console: it is built here once, before any test file
 * runs, rather than by test files running in parallel into the same folder.
 */
export default async function setup(): Promise<void> {
  await buildConsoleIfStale();
}
