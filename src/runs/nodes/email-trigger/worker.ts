import type { NodeWorker } from "../node-executor.ts";
import { acceptedFile } from "../run-document.ts";

/** The email server did the email trigger's work: its step shows the document it accepted and the message it came in. */
export const emailTriggerWorker = {
  execute: async (_node, _data, { state }) => ({ ...acceptedFile(state.file), email: state.run.email ?? null }),
} satisfies NodeWorker<"emailTrigger">;
