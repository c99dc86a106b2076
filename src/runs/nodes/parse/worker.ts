import type { FileRow } from "../../../data/repositories/files.ts";
import type { ParseOptions, ParseOutput } from "../../../documents/parse/parse-document.ts";
import { parseOptions } from "../../../documents/parse/parse-options.ts";
import type { ExecutionContext, NodeWorker } from "../node-executor.ts";
import { runInPool } from "../pool-step.ts";
import { putParseOutput } from "../output-placement.ts";

/** A parse reads the run's document in the task pool; a chunk node after it cuts the latest parse's elements. */
export const parseWorker = {
  execute: (node, _data, { execution, state, signal }) =>
    parseStoredFile(execution, state.file, parseOptions(node.kind.value, state.file.content_type), signal),
  addOutput: (data, node, output) => putParseOutput(data, node.id, output),
} satisfies NodeWorker<"parse", ParseOutput>;

/** Parses the run's file, read from its own organization's documents only, in the task pool. */
async function parseStoredFile(context: ExecutionContext, file: FileRow, options: ParseOptions, signal: AbortSignal): Promise<ParseOutput> {
  const local = await context.store.localCopy({ organizationId: file.organization_id, sha256: file.sha256 });
  try {
    return await runInPool(context.pool, "parse", { format: file.format, file: { path: local.path, sha256: file.sha256 }, options }, signal);
  } finally {
    await local.release();
  }
}
