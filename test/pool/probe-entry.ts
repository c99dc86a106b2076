import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

// A stand-in for a parser taken over by its document: the document (JSON) lists paths this tries to
// read, then it tries to start a program, and keeps `holdMb` of memory. Run by the task pool in place
// of its entry, so under the same confinement as a real parse.

const held: Buffer[] = [];
const residentMb = () => Math.round(process.memoryUsage.rss() / (1024 * 1024));

process.on("message", (task: { input: { file: { path: string } } }) => {
  const attempt = (read: () => unknown) => {
    try {
      read();
      return "read";
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? String(error);
    }
  };
  const { paths, holdMb } = JSON.parse(readFileSync(task.input.file.path, "utf8")) as { paths: string[]; holdMb: number };
  held.push(Buffer.alloc(holdMb * 1024 * 1024, 1));
  const reads = Object.fromEntries(paths.map((path) => [path, attempt(() => readFileSync(path))]));
  const spawn = attempt(() => spawnSync("/bin/true"));
  const output = { reads, spawn, environment: Object.keys(process.env).sort(), uid: process.getuid?.(), gid: process.getgid?.(), pid: process.pid };
  process.send?.({ docpipeResult: true, ok: true, output, residentMb: residentMb(), spent: false });
});
process.send?.({ docpipeReady: true, residentMb: residentMb() });
