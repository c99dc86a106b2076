import { CallbackMethod, type CallbackNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { newId } from "../../../platform/ids.ts";
import type { NewDelivery } from "../../../data/repositories/callback-deliveries.ts";
import type { ClaimedRun } from "../../../data/repositories/run-leases.ts";

/** The HTTP method of each CallbackMethod. */
export const CALLBACK_METHODS: Record<CallbackMethod, "POST" | "PUT" | "PATCH"> = {
  [CallbackMethod.UNSPECIFIED]: "POST",
  [CallbackMethod.POST]: "POST",
  [CallbackMethod.PUT]: "PUT",
  [CallbackMethod.PATCH]: "PATCH",
};

/** Retries after the first attempt when the node sets none: the whole schedule, about 24 hours (see backoffDelay). */
const DEFAULT_CALLBACK_RETRIES = 9;

/**
 * The delivery of `body` for a callback node's step, which the delivery queue sends once the run
 * has completed or failed, apart from the worker slots that parse. It is written in the statement
 * that writes its step (the run's end, or the next step that does I/O). The step's output names
 * it; the attempts are shown on the run.
 */
export function callbackDelivery(run: ClaimedRun, nodeId: string, callback: CallbackNode, body: string): NewDelivery {
  return {
    id: newId(),
    organizationId: run.organization_id,
    nodeId,
    url: callback.url,
    method: CALLBACK_METHODS[callback.method] ?? "POST",
    headers: callback.headers,
    timeoutMs: (callback.timeoutSeconds ?? 30) * 1000,
    retries: callback.retryCount ?? DEFAULT_CALLBACK_RETRIES,
    body,
  };
}

/** What a callback step shows: its delivery and the receiver's host. */
export function callbackOutput(delivery: NewDelivery): { deliveryId: string; host: string } {
  return { deliveryId: delivery.id, host: new URL(delivery.url).host };
}
