import { CallbackMethod, type CallbackNode } from "../../gen/docpipe/v1/pipe_pb.js";
import type { Db } from "../db/schema.ts";
import { newId } from "../ids.ts";
import { enqueueDelivery, type NewDelivery } from "../repositories/callback-deliveries.ts";
import type { Lease } from "../repositories/held-run.ts";
import type { ClaimedRun } from "../repositories/run-leases.ts";

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
 * has completed or failed, apart from the worker slots that parse. It is written with the run's end
 * (see RunEndWrites), or at once by enqueueCallback. The step's output names it; the attempts are
 * shown on the run.
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

/** Writes a callback step's delivery at once; throws when the run is no longer ours (the step's own write then stops the run). */
export async function enqueueCallback(db: Db, lease: Lease, delivery: NewDelivery): Promise<{ deliveryId: string; host: string }> {
  const deliveryId = await enqueueDelivery(db, lease, delivery);
  if (deliveryId === undefined) throw new Error("the run is no longer held by this worker");
  return { ...callbackOutput(delivery), deliveryId };
}
