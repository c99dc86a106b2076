import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/support/run-after-file.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
