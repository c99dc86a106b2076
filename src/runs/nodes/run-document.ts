import { readFile } from "node:fs/promises";
import type { NodeContext } from "./run-data.ts";
import type { FileRow } from "../../data/repositories/files.ts";
import type { ExecutionContext, StepContext } from "./node-executor.ts";

// The run's document as the steps that run here see it.

/** What a trigger's step shows: the document it accepted. */
export function acceptedFile(file: FileRow) {
  return { fileId: file.id, name: file.name, contentType: file.content_type, format: file.format, size: Number(file.size), sha256: file.sha256 };
}

/** What the data nodes of src/runs/nodes/ are given besides their settings and the run data. */
export function nodeContext({ state, signal }: StepContext): NodeContext {
  const { file } = state;
  return {
    document: { name: file.name, format: file.format, contentType: file.content_type, size: Number(file.size) },
    testMode: state.testMode,
    signal,
    organizationId: state.run.organization_id,
  };
}

/** The run's document bytes (an email node attaching it), from its own organization's documents only. */
export async function readStoredFile(context: ExecutionContext, file: FileRow): Promise<Buffer> {
  const local = await context.store.localCopy({ organizationId: file.organization_id, sha256: file.sha256 });
  try {
    return await readFile(local.path);
  } finally {
    await local.release();
  }
}
