import { execFileSync } from "node:child_process";
import { cp, mkdtemp, rm, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { SAMPLES } from "./formats/fixtures.ts";
import { sleep } from "./support/wait.ts";
import { exitOf, startMain, waitForOutput } from "./support/main-process.ts";

const repository = resolve(import.meta.dirname, "..");
let base: string | undefined;
let relocatedCluster: string | undefined;
afterAll(async () => {
  if (base !== undefined) await rm(base, { recursive: true, force: true });
  if (relocatedCluster !== undefined) await rm(relocatedCluster, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/**
 * A clone of this repository inside a fresh `mktemp -d` folder (mode 0700: neither the postgres user
 * the embedded server runs as, when we are root, nor the parse processes' users can traverse it).
 * Its node_modules is this checkout's, hard-linked (a copy where links cannot cross file systems):
 * as unreachable as after a real `npm ci` there, and resolving to itself, as npm's does.
 */
async function cloneIntoPrivateFolder(): Promise<string> {
  base = await mkdtemp(join(tmpdir(), "docpipe-anywhere-"));
  expect((await stat(base)).mode & 0o777).toBe(0o700);
  const clone = join(base, "docpipe");
  execFileSync("git", ["clone", "--quiet", repository, clone], { stdio: "ignore" });
  const from = join(repository, "node_modules");
  try {
    execFileSync("cp", ["-al", from, join(clone, "node_modules")], { stdio: "ignore" });
  } catch {
    await rm(join(clone, "node_modules"), { recursive: true, force: true });
    await cp(from, join(clone, "node_modules"), { recursive: true, verbatimSymlinks: true });
  }
  return clone;
}

it("npm start works from a clone in a fresh mktemp -d folder (mode 0700), as root or not: ready, and its pool parses", { timeout: 120_000 }, async () => {
  const clone = await cloneIntoPrivateFolder();
  const main = startMain({ EMBEDDED_POSTGRES_PORT: String(await freePort()) }, { cwd: clone, ownGroup: true });
  try {
    const [, port] = await waitForOutput(main, /Server listening at http:\/\/127\.0\.0\.1:(\d+)/, 90_000);
    relocatedCluster = /keeping the embedded cluster in (\S+) instead/.exec(main.output.stdout)?.[1];
    // The banner is written once the edge listens, after the line that says so.
    await waitForOutput(main, /first start, demo data created/, 10_000);
    // Ready only once the parse pool has parsed its sample (its processes could not start here: exit code 126).
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    // Logged just after the check resolves, which may reach the pipe after /readyz's answer.
    await waitForOutput(main, /parse pool self-check passed/, 10_000);

    // The banner's submission, with a real PDF: accepted.
    const key = /X-Api-Key: (dp_\w+)/.exec(main.output.stdout)![1]!;
    const path = /\/pipes\/[0-9a-f-]+\/trigger/.exec(main.output.stdout)![0];
    const body = new FormData();
    body.append("file", new Blob([SAMPLES.pdf.bytes], { type: "application/pdf" }), "document.pdf");
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { "x-api-key": key }, body });
    expect(response.status).toBe(202);
  } finally {
    // Ctrl-C under npm start: SIGINT to the terminal's process group, then npm's forward of it.
    process.kill(-main.child.pid!, "SIGINT");
    await sleep(200);
    main.child.kill("SIGINT");
  }
  // The embedded server, in a group of its own, outlived the shutdown; the second signal did not end it half-way.
  expect(await exitOf(main.child)).toBe(0);
  expect(main.output.stdout).toContain('"msg":"stopped"');
  expect(main.output.stderr).toBe("");
});
