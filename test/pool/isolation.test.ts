import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { TaskPool } from "../../src/documents/pool/task-pool.ts";
import { until } from "../support/wait.ts";

// Pool processes are one another's neighbours: a document that runs native code in one must not
// read what another parses, nor reach a service on this machine. Users of their own and network
// namespaces need root, which the service (and CI) run as; as another user the documented fallback
// applies (docs/security.md, "Parse processes"), and there is nothing of this to show.
const asRoot = process.getuid?.() === 0;
const FIRST_USER = { uid: 2_000_000_000, gid: 2_000_000_000 };

const scratch = await mkdtemp(join(tmpdir(), "docpipe-isolation-"));
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** The pool's staging folder is made in the temporary folder: this file's own, so the test can find a process's folder. */
const poolParent = join(scratch, "pools");

/** A document stored as the document store keeps them (readable by this process's user only). */
async function stored(content: object) {
  const bytes = Buffer.from(JSON.stringify(content));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const path = join(scratch, sha256);
  await writeFile(path, bytes, { mode: 0o600 });
  return { format: "json", file: { path, sha256 } };
}

/** The staged documents in the pool's process folders (as root, who may look). */
async function stagedDocuments(): Promise<string[]> {
  const found: string[] = [];
  for (const pool of await readdir(poolParent).catch(() => [])) {
    for (const folder of (await readdir(join(poolParent, pool))).filter((name) => name.startsWith("process-"))) {
      for (const file of await readdir(join(poolParent, pool, folder))) found.push(join(poolParent, pool, folder, file));
    }
  }
  return found;
}

it.runIf(asRoot)(
  "native code a document loads in one pool process cannot read another process's document, nor connect to a loopback port",
  { timeout: 120_000 },
  async () => {
    // The addon, built here with the C compiler.
    const addon = join(scratch, "probe.node");
    execFileSync("cc", ["-shared", "-fPIC", "-o", addon, fileURLToPath(new URL("./native/probe.c", import.meta.url))]);
    // A service on loopback, as the internal port or the database would be.
    const listener = createServer((socket) => socket.destroy()).listen(0, "127.0.0.1");
    await once(listener, "listening");
    const { port } = listener.address() as { port: number };

    const previousTmp = process.env.TMPDIR;
    await mkdir(poolParent, { mode: 0o755 });
    await chmod(scratch, 0o755);
    process.env.TMPDIR = poolParent;
    const pool = new TaskPool({
      size: 2,
      timeoutMs: 60_000,
      memoryMb: 256,
      recycleMb: 64,
      user: FIRST_USER,
      entry: fileURLToPath(new URL("./native-entry.ts", import.meta.url)),
    });
    const holding = new AbortController();
    try {
      // Another organization's document, being parsed in the first process (which holds it).
      const other = pool.run("parse", await stored({ hold: true, secret: "another organization's document" }), holding.signal).catch(() => {});
      await until(async () => (await stagedDocuments()).length === 1, 60_000);
      const [otherDocument] = await stagedDocuments();
      expect(await readFile(otherDocument!, "utf8")).toContain("another organization's document");

      const output = await pool.run(
        "parse",
        await stored({ addon: (await readFile(addon)).toString("base64"), reads: [otherDocument!, "/proc/self/status"], port }),
        new AbortController().signal,
      );
      const { reads, connect, uid } = output as unknown as { reads: Record<string, string>; connect: string; uid: number };
      // The addon ran: it read its own process's status, below the permission model (which refuses /proc).
      expect(reads["/proc/self/status"]).toMatch(/^NoNewPrivs:\s+1$/m);
      expect(uid).toBeGreaterThan(FIRST_USER.uid);
      // The other process's folder is its user's alone; this process has no network but its own, down loopback.
      expect(reads[otherDocument!]).toBe("EACCES");
      expect(connect).toBe("ENETUNREACH");
      holding.abort(new Error("done"));
      await other;
    } finally {
      holding.abort(new Error("done"));
      await pool.destroy();
      listener.close();
      if (previousTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmp;
    }
  },
);
