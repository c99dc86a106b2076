import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const BENCH = new URL("../bench/", import.meta.url);

// `npm run bench` runs under plain Node, not vitest: a bench module that reaches a test helper
// registering vitest hooks (such as test/support/database.ts) would stop the bench at its first import.
it("every benchmark module loads under plain Node, outside vitest", async () => {
  const modules = (await readdir(BENCH)).filter((name) => name.endsWith(".ts") && name !== "run.ts");
  expect(modules.length).toBeGreaterThan(5);
  const script = modules.map((name) => `await import(${JSON.stringify(new URL(name, BENCH).href)});`).join("\n");
  await expect(promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 })).resolves.toBeDefined();
});
