import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { openHeaders } from "../callbacks/callback-headers.ts";
import { SpanKind } from "@opentelemetry/api";
import { type AttemptResult, attemptCallback, backoffDelay } from "../callbacks/deliver.ts";
import type { SecretBox } from "../callbacks/secret-box.ts";
import { SIGNATURE_HEADER, signatureHeader } from "../callbacks/signature.ts";
import { openSigningSecrets } from "../callbacks/signing-secrets.ts";
import type { Db } from "../db/schema.ts";
import { attemptLabel, type Metrics } from "../observability/metrics.ts";
import { contextOfTraceparent, inSpan } from "../observability/tracing.ts";
import { type AttemptRecord, type ClaimedDelivery, claimDelivery, type DeliveryLease, finishAttempt } from "../repositories/callback-deliveries.ts";
import type { WorkerLog } from "../worker/log.ts";
import { Wake } from "../worker/wake.ts";

export interface DeliveryQueueOptions {
  db: Db;
  /** Attempts made at once: each holds a connection (and no worker slot) for up to its timeout. */
  concurrency: number;
  /** Delay before the first retry (see backoffDelay). */
  backoffMs: number;
  allowPrivateNetworks: boolean;
  /** The box that opens signing secrets and sealed headers (its key is loaded on first use). */
  secretBox: () => Promise<SecretBox>;
  /** Idle slots look for due deliveries this often, besides wake(). */
  pollMs: number;
  log: WorkerLog;
  metrics?: Pick<Metrics, "callbackDeliveries"> | undefined;
}

export interface DeliveryQueue {
  /** A delivery has become due (its run finished here): an idle slot looks at once. */
  wake(): void;
  /** Stops claiming, aborts the attempts in flight (they are retried at once by whoever runs next); resolves when done. */
  stop(): Promise<void>;
}

const STOPPED_ERROR = "the worker stopped during this attempt";

/**
 * Sends callbacks from their own queue: `concurrency` slots each claim a due delivery, make one
 * attempt and record it, with the next attempt scheduled by backoffDelay until the delivery's last
 * attempt. A slow or dead receiver costs one of these slots and its connection, never a parse slot.
 */
export function startDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const { db, log } = options;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  const wake = new Wake();

  const attempt = async (delivery: ClaimedDelivery): Promise<AttemptResult> => {
    const organizationId = delivery.organization_id;
    const box = await options.secretBox();
    const secrets = openSigningSecrets(
      box,
      delivery.signing_secrets.map((ciphertext) => ({ ciphertext })),
      organizationId,
    );
    if (secrets.length === 0) {
      return { outcome: "refused", error: "the organization has no signing secret; create one with SigningSecretService.RotateSigningSecret" };
    }
    return attemptCallback({
      url: delivery.url,
      method: delivery.method as "POST" | "PUT" | "PATCH",
      headers: openHeaders(delivery.headers, box, organizationId),
      body: delivery.body,
      sign: (body) => ({ [SIGNATURE_HEADER]: signatureHeader(body, secrets, Math.floor(Date.now() / 1000)) }),
      timeoutMs: delivery.timeout_ms,
      allowPrivateNetworks: options.allowPrivateNetworks,
      signal: stopping.signal,
    });
  };

  /** What follows an attempt that ended with `result`. */
  const next = (delivery: ClaimedDelivery, lease: DeliveryLease, result: AttemptResult): AttemptRecord["next"] => {
    if (result.outcome === "delivered") return { status: "delivered" };
    if (result.outcome === "refused" || lease.attempt >= delivery.last_attempt) return { status: "failed" };
    return { status: "retry", delayMs: backoffDelay(options.backoffMs, lease.attempt) };
  };

  const deliver = async (delivery: ClaimedDelivery, lease: DeliveryLease) => {
    const started = performance.now();
    let record: AttemptRecord;
    try {
      const result = await attempt(delivery);
      options.metrics?.callbackDeliveries.inc({ outcome: result.outcome, attempt: attemptLabel(lease.attempt) });
      record = { durationMs: performance.now() - started, httpStatus: result.status, error: result.error, next: next(delivery, lease, result) };
    } catch (error) {
      if (!stopping.signal.aborted) throw error;
      record = { durationMs: performance.now() - started, error: STOPPED_ERROR, next: { status: "retry_now" } };
    }
    if (!(await finishAttempt(db, lease, record)))
      log.warn({ deliveryId: delivery.id, runId: delivery.run_id }, "callback delivery taken over before its attempt was recorded");
    else log.info({ deliveryId: delivery.id, runId: delivery.run_id, attempt: lease.attempt, outcome: record.next.status }, "callback attempt");
  };

  const slot = async () => {
    while (!stopping.signal.aborted) {
      const generation = wake.generation;
      let claim: Awaited<ReturnType<typeof claimDelivery>>;
      try {
        claim = await claimDelivery(db, workerId);
        if (claim?.delivery.more) wake.notify();
        if (claim !== undefined) {
          const { delivery, lease } = claim;
          // The attempt's span belongs to the trace of the submission whose run queued it.
          await inSpan(
            "callback delivery",
            {
              kind: SpanKind.PRODUCER,
              parent: contextOfTraceparent(delivery.trace_parent),
              attributes: { "docpipe.run.id": delivery.run_id, "docpipe.node.id": delivery.node_id, "docpipe.delivery.attempt": lease.attempt },
            },
            () => deliver(delivery, lease),
          );
        }
      } catch (error) {
        log.error({ err: error }, "a callback delivery broke off; it is retried when its lease expires");
      }
      // Nothing else was due when this claim was made: sleep until a notification (one that came
      // since the claim wakes it at once) or the poll, rather than claim nothing.
      if (claim === undefined || !claim.delivery.more) await wake.wait(options.pollMs, generation);
    }
  };
  const slots = Array.from({ length: options.concurrency }, slot);

  return {
    wake: () => wake.notify(),
    async stop() {
      stopping.abort();
      wake.notifyAll();
      await Promise.all(slots);
    },
  };
}
