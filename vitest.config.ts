import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts", "test/console/build-setup.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
