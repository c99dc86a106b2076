import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { testDatabaseUrl } from "./support/database.ts";
import { exitOf, startMain, waitForOutput } from "./support/main-process.ts";

let dir: string | undefined;
afterAll(() => (dir === undefined ? undefined : rm(dir, { recursive: true, force: true })));

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

/** Whether a TCP connection to the port is accepted: true, or the error's code. */
async function accepts(port: number): Promise<true | string> {
  const socket = connect(port, "127.0.0.1");
  try {
    await once(socket, "connect");
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  } finally {
    socket.destroy();
  }
}

it("prints the demo banner once the edge and the console listen: its curl command works when pasted at once", { timeout: 90_000 }, async () => {
  dir = await mkdtemp(join(tmpdir(), "docpipe-banner-"));
  // This test file's own database is freshly migrated and empty: the first start seeds the demo.
  const [port, internalPort] = [await freePort(), await freePort()];
  const main = startMain({
    DATABASE_URL: await testDatabaseUrl(),
    SEED_DEMO: "true",
    STORAGE_DIR: dir,
    DOCPIPE_ROLES: "edge,services",
    PORT: String(port),
    INTERNAL_PORT: String(internalPort),
  });
  try {
    const [, edgeUrl] = await waitForOutput(main, /^ {4}(http:\/\/localhost:\d+)\/pipes\/[0-9a-f-]+\/trigger$/m, 60_000);
    // At once, as a user pasting the command does: both ports accept.
    const [edge, console] = await Promise.all([accepts(port), accepts(internalPort)]);
    expect({ edge, console }).toEqual({ edge: true, console: true });
    expect(edgeUrl).toBe(`http://localhost:${port}`);
    expect(main.output.stdout).toContain(`http://localhost:${internalPort}/console/#/invitation/`);
  } finally {
    main.child.kill("SIGTERM");
  }
  expect(await exitOf(main.child)).toBe(0);
});
