import { afterAll } from "vitest";

// Vitest ignores an afterAll registered while a hook runs, and the helpers that open pools, servers
// and folders are mostly called from beforeAll. They register here instead; this file is a
// setupFile, so its afterAll is registered in every test file and runs them, newest first.

const cleanups: (() => unknown)[] = [];

/** Runs `cleanup` once the current test file's tests are done, after those registered later. */
export function afterFile(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
