// A pool process that exits between documents: it answers its first task, then exits as soon as the
// answer is on its way (as a process whose document left it dying would: a native thread's crash,
// the OOM killer's choice). It never sees the next task: the death is the previous document's.

const residentMb = () => Math.round(process.memoryUsage.rss() / (1024 * 1024));
let answered = false;

process.on("message", () => {
  if (answered) return;
  answered = true;
  process.send?.({ docpipeResult: true, ok: true, output: { pid: process.pid }, residentMb: residentMb(), spent: false }, () => process.exit(0));
});
process.send?.({ docpipeReady: true, residentMb: residentMb() });
