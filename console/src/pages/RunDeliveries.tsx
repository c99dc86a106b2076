import { useMutation } from "@connectrpc/connect-query";
import { type CallbackDelivery, CallbackDeliveryStatus, type Run } from "../../../gen/docpipe/v1/run_pb.js";
import { redeliverCallback } from "../../../gen/docpipe/v1/run_service-RunService_connectquery.js";
import { Badge, ErrorNotice, TableBox } from "../components.tsx";
import { enumLabel, formatMs, formatTime } from "../format.ts";
import { RunService } from "../../../gen/docpipe/v1/run_service_pb.js";
import { useInvalidate } from "../invalidate.ts";
import { usePermissions } from "../permissions.ts";

const DELIVERY_TONES = {
  [CallbackDeliveryStatus.UNSPECIFIED]: "neutral",
  [CallbackDeliveryStatus.PENDING]: "warn",
  [CallbackDeliveryStatus.DELIVERED]: "good",
  [CallbackDeliveryStatus.FAILED]: "bad",
  [CallbackDeliveryStatus.CANCELLED]: "neutral",
} as const;

/** Whether a delivery of the run may still change by itself (its page refreshes meanwhile). */
export function hasPendingDelivery(run: Run): boolean {
  return run.callbackDeliveries.some((delivery) => delivery.status === CallbackDeliveryStatus.PENDING);
}

/** The run's callback deliveries, each with its attempts and a Redeliver button. */
export function RunDeliveries({ org, run }: { org: string; run: Run }) {
  if (run.callbackDeliveries.length === 0) return null;
  return (
    <>
      <h2>Callbacks</h2>
      <ol className="steps">
        {run.callbackDeliveries.map((delivery) => (
          <Delivery key={delivery.id} org={org} runId={run.id} delivery={delivery} />
        ))}
      </ol>
    </>
  );
}

function Delivery({ org, runId, delivery }: { org: string; runId: string; delivery: CallbackDelivery }) {
  const may = usePermissions(org);
  const invalidate = useInvalidate(RunService);
  const redeliver = useMutation(redeliverCallback, { onSuccess: () => invalidate() });
  const inFlight = delivery.attempts.some((attempt) => attempt.durationMs === undefined);
  return (
    <li className="card">
      <div className="page-head">
        <h3>
          {delivery.nodeId} <span className="muted">to {delivery.host}</span>
        </h3>
        <Badge tone={DELIVERY_TONES[delivery.status]}>{enumLabel(CallbackDeliveryStatus, delivery.status)}</Badge>
        {delivery.nextAttemptTime && <span className="muted">next attempt {formatTime(delivery.nextAttemptTime)}</span>}
        {may("runs.write") && delivery.status !== CallbackDeliveryStatus.CANCELLED && (
          <button
            type="button"
            onClick={() => redeliver.mutate({ organizationId: org, runId, deliveryId: delivery.id })}
            disabled={redeliver.isPending || inFlight}
          >
            Redeliver
          </button>
        )}
      </div>
      <ErrorNotice error={redeliver.error} />
      {delivery.attempts.length === 0 ? (
        <p className="muted">No attempt yet: a callback is sent once its run has completed or failed.</p>
      ) : (
        <TableBox label={`Attempts of ${delivery.nodeId}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Attempt</th>
                <th scope="col">Started</th>
                <th scope="col">Duration</th>
                <th scope="col">HTTP status</th>
                <th scope="col">Error</th>
                <th scope="col">Next attempt</th>
              </tr>
            </thead>
            <tbody>
              {delivery.attempts.map((attempt) => (
                <tr key={attempt.number}>
                  <th scope="row">{attempt.number}</th>
                  <td>{formatTime(attempt.startTime)}</td>
                  <td>{attempt.durationMs === undefined ? "In flight" : formatMs(attempt.durationMs)}</td>
                  <td>{attempt.httpStatus || "None"}</td>
                  <td>{attempt.error}</td>
                  <td>{formatTime(attempt.nextAttemptTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </li>
  );
}
