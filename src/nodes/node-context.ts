import type { RunState, StepContext } from "../worker/node-executor.ts";
import type { NodeContext } from "./run-data.ts";

/** What a trigger's step shows: the document it accepted. */
export function acceptedFile({ file }: RunState) {
  return { fileId: file.id, name: file.name, contentType: file.content_type, format: file.format, size: Number(file.size), sha256: file.sha256 };
}

/** What the data nodes of src/nodes/ are given besides their settings and the run data. */
export function nodeContext({ state, signal }: StepContext): NodeContext {
  const { file } = state;
  return { document: { name: file.name, format: file.format, contentType: file.content_type, size: Number(file.size) }, testMode: state.testMode, signal };
}
