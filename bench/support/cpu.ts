import { readdir, readFile } from "node:fs/promises";

// CPU time from /proc (Linux): a server's threads by role, PostgreSQL's processes, the whole machine.
// Where a request's CPU goes, beside the V8 profile (which sees only the main thread's JavaScript).

/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Node's thread names (comm) -> what they do. */
const THREAD_ROLES: ReadonlyMap<string, string> = new Map([
  ["MainThread", "main thread (JavaScript, system calls)"],
  ["V8Worker", "V8 helper threads (concurrent GC, compilers)"],
  ["libuv-worker", "libuv threadpool (file I/O, fsync)"],
]);
const OTHER_THREADS = "other server threads";

/** CPU seconds by part. */
export type CpuSeconds = Map<string, number>;

/** CPU seconds used so far by each thread, process or the machine, with the part each counts in. */
export type CpuSnapshot = Map<string, { part: string; seconds: number }>;

const POSTGRES = "PostgreSQL (every backend)";
const MACHINE = "whole machine (user + system; load client included)";

/** The parts, in the order reports list them. */
export const CPU_PARTS = [...THREAD_ROLES.values(), OTHER_THREADS, POSTGRES, MACHINE];

async function ticksOf(statPath: string): Promise<number> {
  const stat = await readFile(statPath, "utf8").catch(() => "");
  // Fields after the ")" that closes the command name: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
}

async function commOf(path: string): Promise<string> {
  return (await readFile(path, "utf8").catch(() => "")).trim();
}

/** CPU used so far by `serverPid`'s threads, by every PostgreSQL process, and by the machine. */
export async function cpuSnapshot(serverPid: number): Promise<CpuSnapshot> {
  const snapshot: CpuSnapshot = new Map();
  const record = (key: string, part: string, ticks: number) => snapshot.set(key, { part, seconds: ticks / TICKS_PER_SECOND });
  for (const task of await readdir(`/proc/${serverPid}/task`).catch(() => [])) {
    const comm = await commOf(`/proc/${serverPid}/task/${task}/comm`);
    record(`thread ${task}`, THREAD_ROLES.get(comm) ?? OTHER_THREADS, await ticksOf(`/proc/${serverPid}/task/${task}/stat`));
  }
  for (const pid of (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry))) {
    if ((await commOf(`/proc/${pid}/comm`)).startsWith("postgres")) record(`process ${pid}`, POSTGRES, await ticksOf(`/proc/${pid}/stat`));
  }
  const [, user, nice, system, , , irq, softirq] = (await readFile("/proc/stat", "utf8")).split("\n", 1)[0]!.split(/\s+/).map(Number);
  record("machine", MACHINE, user! + nice! + system! + irq! + softirq!);
  return snapshot;
}

/**
 * Adds what each part used between two snapshots into `into`. A thread or process that started
 * meanwhile counts whole; one that ended is left out (its time is gone from /proc).
 */
export function addCpuBetween(into: CpuSeconds, before: CpuSnapshot, after: CpuSnapshot): void {
  for (const [key, { part, seconds }] of after) {
    into.set(part, (into.get(part) ?? 0) + seconds - (before.get(key)?.seconds ?? 0));
  }
}
