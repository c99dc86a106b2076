// Vitest ignores an afterAll registered while a hook runs, and the helpers that open pools, servers
// and folders are mostly called from beforeAll. They register here instead, and the setup file
// run-after-file.ts runs what the test file registered once its tests are done. Outside vitest (the
// benchmarks share these helpers) nothing runs them.

const cleanups: (() => unknown)[] = [];

/** Runs `cleanup` once the current test file's tests are done, after those registered later. */
export function afterFile(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

/** Runs and forgets every registered cleanup, newest first. */
export async function runAfterFile(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}
