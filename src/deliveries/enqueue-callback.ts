import { CallbackMethod, type CallbackNode } from "../../gen/docpipe/v1/pipe_pb.js";
import type { Db } from "../db/schema.ts";
import { enqueueDelivery } from "../repositories/callback-deliveries.ts";
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
 * A callback node's step: writes the delivery of `body` to the delivery queue, which sends it once
 * the run has completed or failed, apart from the worker slots that parse. Its output names the
 * delivery; the attempts are shown on the run. Throws when the run is no longer ours (the step's
 * own write then stops the run).
 */
export async function enqueueCallback(db: Db, run: ClaimedRun, lease: Lease, nodeId: string, callback: CallbackNode, body: string): Promise<unknown> {
  const deliveryId = await enqueueDelivery(db, lease, {
    organizationId: run.organization_id,
    nodeId,
    url: callback.url,
    method: CALLBACK_METHODS[callback.method] ?? "POST",
    headers: callback.headers,
    timeoutMs: (callback.timeoutSeconds ?? 30) * 1000,
    retries: callback.retryCount ?? DEFAULT_CALLBACK_RETRIES,
    body,
  });
  if (deliveryId === undefined) throw new Error("the run is no longer held by this worker");
  return { deliveryId, host: new URL(callback.url).host };
}
