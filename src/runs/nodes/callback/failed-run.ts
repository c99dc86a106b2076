import type { Db } from "../../../data/db/schema.ts";
import { pendingDeliveryBodies } from "../../../data/repositories/callback-deliveries.ts";
import type { NewDelivery } from "../../../data/repositories/callback-deliveries.ts";
import type { RunEndWrites } from "../../../data/repositories/run-leases.ts";
import { failedCallbackBody } from "./body.ts";

/**
 * What a failing run's end writes so that every callback reports the run's final status (none is
 * sent before the run's end): the deliveries its end writes, and those written with an earlier step
 * (perhaps by an earlier attempt) and still pending, each as failedCallbackBody makes it. The run's
 * lease holder alone writes its deliveries, so none changes between this read and the end's write.
 */
export async function failedRunWrites(db: Db, runId: string, error: string, writes: RunEndWrites = {}): Promise<RunEndWrites & { deliveries: NewDelivery[] }> {
  const queued = writes.deliveries ?? [];
  const writtenNow = new Set(queued.map((delivery) => delivery.nodeId));
  const bodies = (await pendingDeliveryBodies(db, runId)).flatMap((delivery) => {
    const body = failedCallbackBody(delivery.body, error);
    return writtenNow.has(delivery.node_id) || body === delivery.body ? [] : [{ id: delivery.id, body }];
  });
  return { ...writes, deliveries: queued.map((delivery) => ({ ...delivery, body: failedCallbackBody(delivery.body, error) })), bodies };
}
