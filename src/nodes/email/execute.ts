import { readFile } from "node:fs/promises";
import type { FileRow } from "../../repositories/files.ts";
import type { ExecutionContext, NodeExecutor } from "../../worker/node-executor.ts";
import { nodeContext } from "../node-context.ts";
import { runEmail } from "./email.ts";

/** The run's document bytes (an email node attaching it), from its own organization's documents only. */
async function readStoredFile(context: ExecutionContext, file: FileRow): Promise<Buffer> {
  const local = await context.store.localCopy({ organizationId: file.organization_id, sha256: file.sha256 });
  try {
    return await readFile(local.path);
  } finally {
    await local.release();
  }
}

/** Sends the node's message with the worker's mailer and From address (see runEmail). */
export const executeEmail: NodeExecutor<"email"> = (node, data, step) =>
  runEmail(node.kind.value, data, {
    ...nodeContext(step),
    mailer: step.execution.outbound.mailer,
    from: step.execution.outbound.mailFrom,
    readDocument: () => readStoredFile(step.execution, step.state.file),
    log: { warn: (object, message) => step.execution.outbound.log.warn({ ...object, runId: step.state.run.id, nodeId: step.step.nodeId }, message) },
  });
