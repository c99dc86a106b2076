import { type ChildProcess, fork } from "node:child_process";
import { chown, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Owner } from "../../platform/reachable.ts";
import type { Launch } from "./confinement.ts";
import { type ProcessMessage, readProcessMessage } from "./tasks.ts";

/** How a pool process is confined; see docs/security.md. */
export interface Confinement {
  /** Memory budget (MB): V8's heap limit, and with `prlimit` the kernel's data limit above V8's and Skia's reservations. */
  memoryMb: number;
  /** How processes start on this machine: their users, namespaces and the paths they see. */
  launch: Launch;
}

/**
 * Address space made writable whatever the document: V8 reserves each isolate's code range
 * read-write (Node does not start with a data limit under 600 MB), and OCR engines run in worker
 * threads, each an isolate (at most two of them, src/documents/parse/ocr.ts); loading @napi-rs/canvas (Skia),
 * which renders a PDF page for OCR, adds about 1 GB (VmData 0.59 -> 1.65 GB on import, measured on
 * Node 24). The kernel's limit is the budget above those: loose, but a native allocation that runs
 * away (an image decoder, WebAssembly memory) fails there even between two /proc readings.
 */
const RESERVED_MB = 512 * 3 + 1024;

/** The last stderr kept to tell a death by memory (V8 or the kernel's limit) from a crash. */
const STDERR_TAIL = 4096;

/** How V8 and Node say, as they abort, that an allocation failed. */
const OUT_OF_MEMORY = /out of memory|Allocation failed/i;

/** How a pool process ended: by a signal, an exit code, or an error starting it. */
export interface ProcessEnd {
  signal: NodeJS.Signals | null;
  exitCode: number | null;
  /** It died because an allocation failed (V8's heap limit or the kernel's data limit). */
  outOfMemory: boolean;
  /** It was ended for sending a message that is not the pool's (a process taken over by its document). */
  misbehaved: boolean;
  error?: Error;
}

/**
 * One child process of the task pool, started confined: an empty environment but for TMPDIR (its
 * own folder), Node's permission model (reads of the code and its own folder only, writes to its
 * folder only, no child processes), the kernel's data limit, below normal CPU priority, and what
 * its Launch gives (a user of its own, no new privileges, no network; src/documents/pool/confinement.ts).
 * Its folder is where the pool stages the document of each task.
 */
export class PoolProcess {
  readonly folder: string;
  /** The user it runs as, who must own the documents it is given; undefined: the service's. */
  readonly user: Owner | undefined;
  readonly #child: ChildProcess;
  #stderrTail = "";
  #killed = false;
  #misbehaved = false;
  /** Resolves once the process has ended (never rejects). */
  readonly ended: Promise<ProcessEnd>;
  /** Whether the process became ready for tasks (false: it died first). */
  readonly ready: Promise<boolean>;
  /** Its resident memory when it became ready (MB): what a task may not leave it holding much more than. */
  readyResidentMb = 0;
  /** Who waits for the result of the task in flight. */
  #result: ((message: Extract<ProcessMessage, { docpipeResult: true }>) => void) | undefined;

  private constructor(folder: string, user: Owner | undefined, child: ChildProcess) {
    this.folder = folder;
    this.user = user;
    this.#child = child;
    child.stderr?.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      this.#stderrTail = (this.#stderrTail + chunk.toString("latin1")).slice(-STDERR_TAIL);
    });
    this.ended = new Promise((resolve) => {
      const end = (exitCode: number | null, signal: NodeJS.Signals | null, error?: Error) =>
        resolve({
          exitCode,
          signal,
          outOfMemory: OUT_OF_MEMORY.test(this.#stderrTail),
          misbehaved: this.#misbehaved,
          ...(error === undefined ? {} : { error }),
        });
      child.once("exit", (code, signal) => end(code, signal));
      // Spawning failed (no exit follows), or a message could not be sent (the process is going).
      child.on("error", (error) => {
        if (child.pid === undefined) end(null, null, error);
      });
    });
    this.ready = new Promise((resolve) => {
      child.on("message", (received: unknown) => {
        const message = readProcessMessage(received);
        if (message === undefined) {
          this.#misbehaved = true;
          this.kill();
        } else if ("docpipeReady" in message) {
          this.readyResidentMb = message.residentMb;
          resolve(true);
        } else this.#result?.(message);
      });
      void this.ended.then(() => resolve(false));
    });
    // Quietly: the pool removes its whole folder at its end, and this one with it.
    void this.ended.then(() => rm(folder, { recursive: true, force: true })).catch(() => {});
    child.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /** Starts the `n`-th process, with its own (empty) folder in `staging`, as `launch` says. */
  static async start(staging: string, n: number, confinement: Confinement): Promise<PoolProcess> {
    const folder = join(staging, `process-${n}`);
    await mkdir(folder, { mode: 0o700 });
    const { memoryMb, launch } = confinement;
    const { paths } = launch;
    const user = launch.userOf(n);
    if (user !== undefined) await chown(folder, user.uid, user.gid);
    const nodeArgs = [
      `--max-old-space-size=${memoryMb}`,
      "--permission",
      `--allow-fs-read=${paths.source}`,
      `--allow-fs-read=${paths.entry}`,
      `--allow-fs-read=${paths.nodeModules}`,
      `--allow-fs-read=${folder}`,
      `--allow-fs-write=${folder}`,
      // sharp and the canvas that renders PDF pages for OCR are native addons; tesseract.js runs its
      // engine in a worker thread. Both stay inside this process and under its user, namespaces and permissions.
      "--allow-addons",
      "--allow-worker",
      // Node warns of those two on every start; the reason is above.
      "--disable-warning=PERM0001",
      "--disable-warning=PERM0006",
    ];
    const [program, ...leading] = [...launch.prefix(user, (memoryMb + RESERVED_MB) * 1024 * 1024), paths.node];
    const child = fork(paths.entry, [], {
      execPath: program,
      execArgv: [...leading, ...nodeArgs],
      // HOME too: its user may have no account, and os.homedir() (the canvas looks for fonts there) fails without one.
      env: { TMPDIR: folder, HOME: folder },
      serialization: "advanced",
      stdio: ["ignore", "inherit", "pipe", "ipc"],
    });
    return new PoolProcess(folder, user, child);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether the process has not been told to end nor died. */
  get alive(): boolean {
    return !this.#killed && this.#child.exitCode === null && this.#child.signalCode === null && this.#child.pid !== undefined;
  }

  /** Sends a task; resolves with its result, or with how the process ended first. */
  run(task: unknown): Promise<Extract<ProcessMessage, { docpipeResult: true }> | ProcessEnd> {
    const result = new Promise<Extract<ProcessMessage, { docpipeResult: true }>>((resolve) => {
      this.#result = resolve;
    });
    this.#child.send(task as never);
    return Promise.race([result, this.ended]);
  }

  /** Whether this process keeps the event loop alive: while it starts or runs a task, not while idle. */
  hold(held: boolean): void {
    const channel = this.#child.channel;
    if (held) channel?.ref();
    else channel?.unref();
  }

  /** Ends the process at once: it runs untrusted work, nothing of it needs a graceful end. */
  kill(): void {
    this.#killed = true;
    this.#child.ref(); // whoever ended it may wait for its end
    this.#child.kill("SIGKILL");
  }
}
