import { defineConfig } from "vitest/config";

/**
 * Two tiers. `fast` (`npm test`) is what a developer runs before every commit: services, edge,
 * worker, parse and storage tests in-process against PostgreSQL. `e2e` (`npm run test:e2e`) holds
 * the files whose subject is a process boundary, a browser, a topology of processes or a clone of
 * the repository: they start `node src/app/main.ts`, Chromium, `buf` or a fresh checkout, or they drive
 * the parse pool's processes to their budgets and kill them, or they time a parse's growth on
 * pathological pages, or they run the sandbox's expressions and schemas out to their budgets (each of
 * those tests spends seconds of CPU on purpose: a 30 MiB picture, a stream inflating to 1 GiB, a time
 * budget run out, a page of 40,000 runs parsed six times).
 */
const e2e = [
  "test/**/*.browser.test.ts",
  "test/edge/browser.test.ts",
  "test/main.test.ts",
  "test/start.test.ts",
  "test/start-banner.test.ts",
  "test/start-anywhere.test.ts",
  "test/db/embedded-privileges.test.ts",
  "test/topology.test.ts",
  "test/worker/processes.test.ts",
  "test/pool/task-pool.test.ts",
  "test/pool/isolation.test.ts",
  "test/worker/hostile-documents.test.ts",
  "test/parse/pdf-linear-time.test.ts",
  "test/sandbox/expression-budgets.test.ts",
  "test/nodes/transform-validate-budgets.test.ts",
  "test/observability/tracing.test.ts",
  "test/observability/metrics-port.test.ts",
  "test/parse/ocr-offline.test.ts",
  "test/contract/breaking.test.ts",
  "test/bench-imports.test.ts",
  "test/e2e/**/*.test.ts",
];

export default defineConfig({
  test: {
    globalSetup: ["test/global-setup.ts", "test/console/build-setup.ts"],
    setupFiles: ["test/support/per-file.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Most of a test's time is spent waiting on PostgreSQL, sockets and child processes, not on
    // this process's CPU: two files at a time on two cores (Vitest's default would be one).
    maxWorkers: 2,
    projects: [
      // The fast tier's files share one module graph per worker (no re-import of the service for
      // each of ~70 files); each file still works in a database of its own (test/support/per-file.ts).
      { extends: true, test: { name: "fast", include: ["test/**/*.test.ts"], exclude: e2e, isolate: false } },
      // The whole tier gets a minute per test (files that need more set their own). A browser test is a
      // dozen pages and clicks, each waiting on a server process beside Chromium and another file's
      // processes: on two busy cores one of 5 s took over 20 s. A minute still stops a hang, and
      // Playwright's own 30 s wait fails first, naming the step that never came.
      { extends: true, test: { name: "e2e", include: e2e, testTimeout: 60_000 } },
    ],
  },
});
