import { constants, setPriority } from "node:os";

/**
 * A sandbox thread's entry point (pool.ts starts it): it lowers the thread's CPU priority to below
 * normal, as parse processes run, then loads the thread itself (thread.ts), so that loading, and
 * every start after a thread was ended at its budget, already runs at the lower priority. An
 * expression that spins for its whole budget (a `$pad` building millions of characters) then takes
 * a core only when the edge and the RPCs leave it free: two such threads on a 2-core machine took
 * about half of the edge's throughput at normal priority. On Linux a thread has a priority of its
 * own (no process id names the calling thread), so the main thread keeps its normal one; elsewhere
 * the call would lower the whole process, so it is made on Linux only.
 */
if (process.platform === "linux") setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
await import("./thread.ts");
