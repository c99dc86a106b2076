import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile, readlink } from "node:fs/promises";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import type { LoadResult, LoadSpec } from "./load-client.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STARTUP_TIMEOUT_MS = 30_000;

/** A port nobody listens on right now (the OS picks it; a race with another process is unlikely on loopback). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

export interface ServerProcess {
  url: string;
  pid: number;
  /** Resolves with the exit code once the process has stopped (SIGTERM: a graceful shutdown). */
  stop(): Promise<number | null>;
  /** Whether the process exited on its own (a crash). */
  exited(): boolean;
  /** The end of its stderr, to explain a failure. */
  stderr(): string;
  /** Everything it wrote on stdout, when started with `keepStdout` (V8's --trace-gc-nvp lines); "" otherwise. */
  stdout(): string;
}

export interface SpawnOptions {
  /** Keep the process's whole stdout (it is discarded otherwise). */
  keepStdout?: boolean;
}

/**
 * Runs `script` (relative to the repository) in its own Node process listening on `port`, and
 * waits until GET /healthz answers. Its stderr is kept to explain a failed start.
 */
export async function spawnServer(
  script: string,
  port: number,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  options: SpawnOptions = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", options.keepStdout ? "pipe" : "ignore", "pipe"],
  });
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let exitCode: number | null | undefined;
  const exit = once(child, "exit").then(([code]) => (exitCode = code as number | null));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (!(await isHealthy(url))) {
    if (exitCode !== undefined || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${script} did not start (exit ${exitCode}): ${stderr}`);
    }
    await sleep(100);
  }
  return {
    url,
    pid: child.pid!,
    exited: () => exitCode !== undefined,
    stderr: () => stderr,
    stdout: () => stdout,
    stop: async () => {
      if (exitCode === undefined) child.kill("SIGTERM");
      return exit;
    },
  };
}

async function isHealthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`)).ok;
  } catch {
    return false;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs a bench client script (a path under the repository) in a child process with its spec (JSON) and returns what it prints (JSON). */
export async function runClient<Spec, Result>(script: string, spec: Spec): Promise<Result> {
  const child: ChildProcess = spawn(process.execPath, [script, JSON.stringify(spec)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code] = await once(child, "exit");
  if (code !== 0) throw new Error(`${script} exited with ${code}`);
  return JSON.parse(output) as Result;
}

/** Runs the load generator in a child process and returns its result. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return runClient("bench/support/load-client.ts", spec);
}

/** Resident and peak resident memory of a process, in bytes, from /proc. */
export async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

/** Open file descriptors of a process: all of them, and those on files under `dir`. */
export async function openFilesOf(pid: number, dir: string): Promise<{ total: number; under: number }> {
  const fds = await readdir(`/proc/${pid}/fd`);
  let under = 0;
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    if (target.startsWith(dir)) under++;
  }
  return { total: fds.length, under };
}
