import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { startScriptNodeFlags } from "../../bench/support/start-flags.ts";
import { TEST_SEALING_KEY } from "./deps.ts";
import { sleep } from "./wait.ts";

export interface MainProcess {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
}

/**
 * `node src/app/main.ts` in `cwd` with `npm start`'s Node flags (`nodeFlags` instead, when given), or
 * another entry with none (as `npm run migrate` runs src/app/migrate.ts), with `env` over a minimal
 * environment (in a process group of its own with `ownGroup`); collects its output.
 */
export function startMain(env: Record<string, string>, options: { cwd?: string; entry?: string; ownGroup?: boolean; nodeFlags?: string[] } = {}): MainProcess {
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? (options.entry === undefined ? startScriptNodeFlags() : [])), options.entry ?? "src/app/main.ts"],
    {
      cwd: options.cwd,
      // A process group led by the process, as a terminal's foreground job is: a signal can go to the whole group.
      detached: options.ownGroup ?? false,
      // The services' sealing key of the test run, so a process started here seals nothing another test cannot open.
      env: { PATH: process.env.PATH, LOG_LEVEL: "info", PORT: "0", INTERNAL_PORT: "0", HOST: "127.0.0.1", SIGNING_SECRETS_KEY: TEST_SEALING_KEY, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output = { stdout: "", stderr: "" };
  child.stdout!.on("data", (chunk: Buffer) => (output.stdout += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output.stderr += chunk));
  return { child, output };
}

export async function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const [code] = await once(child, "exit");
  return code as number | null;
}

/** Resolves when `pattern` appears in the process's stdout; rejects if it exits first or after `timeoutMs`. */
export async function waitForOutput(main: MainProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(main.output.stdout);
    if (match) return match;
    if (main.child.exitCode !== null) throw new Error(`exited with ${main.child.exitCode} before ${pattern}: ${main.output.stderr}${main.output.stdout}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms: ${main.output.stderr}${main.output.stdout}`);
    await sleep(50);
  }
}

/** A port taken by a listening socket of ours, until `close()`. */
export async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as { port: number }).port, server };
}

/** TCP ports the process listens on, from /proc (Linux). */
export function listeningPorts(pid: number): number[] {
  const sockets = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined) sockets.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // fields: sl local_address rem_address st ... inode(9)
      if (fields[3] === "0A" && sockets.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/** Process ids whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}
