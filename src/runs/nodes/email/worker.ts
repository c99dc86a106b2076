import type { NodeWorker } from "../node-executor.ts";
import { nodeContext, readStoredFile } from "../run-document.ts";
import { runEmail } from "./email.ts";

/** An email is sent through the worker's SMTP transport, the run's document attached when asked. */
export const emailWorker = {
  execute: (node, data, step) =>
    runEmail(node.kind.value, data, {
      ...nodeContext(step),
      mailer: step.execution.outbound.mailer,
      from: step.execution.outbound.mailFrom,
      readDocument: () => readStoredFile(step.execution, step.state.file),
      log: { warn: (object, message) => step.execution.outbound.log.warn({ ...object, runId: step.state.run.id, nodeId: step.step.nodeId }, message) },
    }),
} satisfies NodeWorker<"email">;
