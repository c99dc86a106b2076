import { callbackDelivery, callbackOutput } from "../../deliveries/enqueue-callback.ts";
import type { NodeExecutor } from "../../worker/node-executor.ts";
import { callbackBody, previewCallback } from "./body.ts";

/** Queues the callback's delivery, written with its step: with the run's end, or with the next step that does I/O. */
export const executeCallback: NodeExecutor<"callback"> = async (node, _data, { state }) => {
  if (state.testMode) return previewCallback(state, node.kind.value);
  const delivery = callbackDelivery(state.run, node.id, node.kind.value, callbackBody(state, new Date()));
  state.queued.push(delivery);
  return callbackOutput(delivery);
};
