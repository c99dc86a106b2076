import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NotReadyError } from "../../platform/observability/readiness.ts";
import type { TaskPool } from "../../documents/pool/task-pool.ts";

/** The built-in sample the check parses, and what its text must be. */
const SAMPLE_TEXT = "docpipe parse pool self-check";

/**
 * A check that the task pool can parse: a plain-text sample, stored as the document store keeps
 * files, parsed through the pool as every run's document is (a process started as configured, the
 * document staged into its folder, the result sent back). A pool that cannot start its processes
 * (a checkout its users cannot reach, a tool missing) fails this instead of every run.
 *
 * The returned function resolves once a check has passed; until then each call waits for the check
 * in flight, or starts one when the last failed, and rejects with a NotReadyError saying why.
 */
export function poolSelfCheck(pool: TaskPool): () => Promise<void> {
  let passed = false;
  let inFlight: Promise<void> | undefined;
  const check = async () => {
    const folder = await mkdtemp(join(tmpdir(), "docpipe-self-check-"));
    try {
      const bytes = Buffer.from(SAMPLE_TEXT);
      const path = join(folder, "sample.txt");
      await writeFile(path, bytes, { mode: 0o600 });
      const file = { path, sha256: createHash("sha256").update(bytes).digest("hex") };
      const output = await pool.run("parse", { format: "txt", file }, AbortSignal.timeout(pool.options.timeoutMs * 2));
      if (output.text?.trim() !== SAMPLE_TEXT) throw new Error(`its text came back as ${JSON.stringify(output.text?.slice(0, 80))}`);
      passed = true;
    } catch (error) {
      throw new NotReadyError(`the parse pool cannot parse a sample document: ${(error as Error).message}`, { cause: error });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  };
  return () => {
    if (passed) return Promise.resolve();
    inFlight ??= check().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
