import type { CallbackNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { MASKED, previewUrl } from "../../deliveries/preview-url.ts";
import { SIGNATURE_HEADER } from "../../deliveries/signature.ts";
import type { NodeWorker, RunState } from "../node-executor.ts";
import { type CallbackRun, callbackBody } from "./body.ts";
import { CALLBACK_METHODS, callbackDelivery, callbackOutput } from "./delivery.ts";

/**
 * A callback queues its delivery, written with its step (with the run's end, or with the next step
 * that does I/O) and sent once the run has ended; its output names the delivery and stays out of the
 * run data. It runs after a failure too, to report it. In test mode it sends nothing: its output is the request it would have sent.
 */
export const callbackWorker = {
  execute: async (node, _data, { state }) => {
    if (state.testMode) return previewCallback(callbackRun(state), node.kind.value);
    const delivery = callbackDelivery(state.run, node.id, node.kind.value, callbackBody(callbackRun(state), new Date()));
    state.queued.push(delivery);
    return callbackOutput(delivery);
  },
  addOutput() {},
  runsAfterFailure: true,
  passesOn(_output, _node, state) {
    if (!state.testMode) state.deliveries++;
    return undefined;
  },
} satisfies NodeWorker<"callback">;

function callbackRun(state: RunState): CallbackRun {
  return { run: state.run, fileName: state.file.name, data: state.data, failure: state.failure };
}

/** The request a callback in test mode would send: header values are masked (they often carry tokens), and so is the signature. */
function previewCallback(run: CallbackRun, callback: CallbackNode): unknown {
  return {
    testMode: true,
    sent: false,
    request: {
      method: CALLBACK_METHODS[callback.method] ?? "POST",
      url: previewUrl(callback.url),
      headers: {
        ...Object.fromEntries(Object.keys(callback.headers).map((name) => [name, MASKED])),
        "content-type": "application/json",
        [SIGNATURE_HEADER]: `t=${Math.floor(Date.now() / 1000)},v1=${MASKED}`,
      },
      body: JSON.parse(callbackBody(run, new Date())),
    },
  };
}
