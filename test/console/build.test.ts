import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { consoleIsStale } from "../../console/build.ts";
import { CONSOLE_DIST_DIR } from "../../src/inbound/rpc/console.ts";

describe("the console build (made by build-setup.ts, under vitest's NODE_ENV=test)", () => {
  it("is up to date with its sources", async () => {
    expect(await consoleIsStale()).toBe(false);
  });

  it("is React's production build: no development JSX runtime, no DevTools banner", async () => {
    const assets = await readdir(join(CONSOLE_DIST_DIR, "assets"));
    const scripts = await Promise.all(assets.filter((name) => name.endsWith(".js")).map((name) => readFile(join(CONSOLE_DIST_DIR, "assets", name), "utf8")));
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      expect(script).not.toContain("jsxDEV");
      expect(script).not.toContain("react-devtools");
    }
  });

  it("index.html has no inline script, so the Content-Security-Policy needs no exception", async () => {
    const html = await readFile(join(CONSOLE_DIST_DIR, "index.html"), "utf8");
    expect(html).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });
});
