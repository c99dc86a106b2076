import { readFileSync } from "node:fs";

// A stand-in for a parse process taken over by its document (code execution in a decoder, see
// docs/security.md): it answers a task over the IPC channel with whatever the document (JSON,
// `{"reply": ...}`) says, in place of a result.

process.on("message", (task: { input: { file: { path: string } } }) => {
  const { reply } = JSON.parse(readFileSync(task.input.file.path, "utf8")) as { reply: unknown };
  process.send?.(reply as never);
});
process.send?.({ docpipeReady: true, residentMb: Math.round(process.memoryUsage.rss() / (1024 * 1024)) });
