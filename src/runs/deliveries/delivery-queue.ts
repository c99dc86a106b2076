import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { openHeaders } from "./sealed-headers.ts";
import { SpanKind } from "@opentelemetry/api";
import { type AttemptResult, attemptCallback, backoffDelay } from "./deliver.ts";
import type { SecretBox } from "./secret-box.ts";
import { SIGNATURE_HEADER, signatureHeader } from "./signature.ts";
import { openSigningSecrets } from "./signing-secrets.ts";
import type { Db } from "../../data/db/schema.ts";
import { attemptLabel, type Metrics } from "../../platform/observability/metrics.ts";
import { contextOfTraceparent, inSpan } from "../../platform/observability/tracing.ts";
import {
  type AttemptRecord,
  type ClaimedDelivery,
  claimDelivery,
  type DeliveryLease,
  finishAttempt,
  type NewDelivery,
} from "../../data/repositories/callback-deliveries.ts";
import type { ClaimedRun, LeasedDeliveries } from "../../data/repositories/run-leases.ts";
import type { WorkerLog } from "../../platform/worker-log.ts";
import { Wake } from "../../platform/wake.ts";

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
  /**
   * Room for the first attempts of `count` deliveries that a run's end writes, made at once by this
   * process (see finishRunLeasingDeliveries), within the queue's concurrency; undefined when every
   * attempt is in use: the run's end then writes them for the queue, as any other.
   */
  reserve(count: number): FirstAttempts | undefined;
  /**
   * Stops claiming, aborts the attempts in flight (they are retried at once by whoever runs next);
   * resolves when done. Called once nothing will send() any more (the run slots have stopped).
   */
  stop(): Promise<void>;
}

/** Room reserved for the first attempts of a run's deliveries. */
interface FirstAttempts {
  /** The lease owner the run's end writes the deliveries with. */
  readonly owner: string;
  /** The run's end was written, the deliveries leased: makes their attempts, apart from the run's slot. */
  send(run: Pick<ClaimedRun, "id" | "trace_parent">, deliveries: readonly NewDelivery[], leased: LeasedDeliveries): void;
  /** The run's end was not written: frees the room. */
  cancel(): void;
}

const STOPPED_ERROR = "the worker stopped during this attempt";

/**
 * Sends callbacks from their own queue: `concurrency` slots each claim a due delivery, make one
 * attempt and record it, with the next attempt scheduled by backoffDelay until the delivery's last
 * attempt. A delivery's first attempt is made at once by the process that ended its run, leased in
 * the run's last statement, when the queue has room (reserve). At most `concurrency` attempts are
 * made at once either way. A slow or dead receiver costs one of them and its connection, never a
 * parse slot.
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
      return {
        outcome: "refused",
        error:
          "the organization has no signing secret; create one in the console (Settings, Signing secret) or with SigningSecretService.RotateSigningSecret, then redeliver",
      };
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

  /** The delivery's attempt, in the trace of the submission whose run queued it. */
  const attemptInSpan = (delivery: ClaimedDelivery, lease: DeliveryLease) =>
    inSpan(
      "callback delivery",
      {
        kind: SpanKind.PRODUCER,
        parent: contextOfTraceparent(delivery.trace_parent),
        attributes: { "docpipe.run.id": delivery.run_id, "docpipe.node.id": delivery.node_id, "docpipe.delivery.attempt": lease.attempt },
      },
      () => deliver(delivery, lease),
    );
  const brokeOff = (error: unknown) => log.error({ err: error }, "a callback delivery broke off; it is retried when its lease expires");

  /** Attempts being made (a slot's claim and attempt) or reserved for a run's deliveries. */
  let inFlight = 0;
  /** A slot waits for an attempt to end, to have room to claim. */
  let waitingForRoom = false;
  const release = (count: number) => {
    inFlight -= count;
    if (count > 0 && waitingForRoom) {
      waitingForRoom = false;
      wake.notify();
    }
  };
  /** First attempts made straight from a run's end, for stop() to wait for. */
  const firstAttempts = new Set<Promise<void>>();

  const slot = async () => {
    while (!stopping.signal.aborted) {
      const generation = wake.generation;
      if (inFlight >= options.concurrency) {
        waitingForRoom = true;
        await wake.wait(options.pollMs, generation);
        continue;
      }
      inFlight++;
      let claim: Awaited<ReturnType<typeof claimDelivery>>;
      try {
        claim = await claimDelivery(db, workerId);
        if (claim?.delivery.more) wake.notify();
        if (claim !== undefined) await attemptInSpan(claim.delivery, claim.lease);
      } catch (error) {
        brokeOff(error);
      } finally {
        release(1);
      }
      // Nothing else was due when this claim was made: sleep until a notification (one that came
      // since the claim wakes it at once) or the poll, rather than claim nothing.
      if (claim === undefined || !claim.delivery.more) await wake.wait(options.pollMs, generation);
    }
  };
  const slots = Array.from({ length: options.concurrency }, slot);

  const reserve = (count: number): FirstAttempts | undefined => {
    if (stopping.signal.aborted || inFlight + count > options.concurrency) return undefined;
    inFlight += count;
    let reserved = count;
    const owner = `${workerId}:${randomUUID()}`;
    return {
      owner,
      send(run, deliveries, leased) {
        for (const delivery of deliveries) {
          const id = leased.ids.get(delivery.nodeId);
          if (id === undefined || reserved === 0) continue;
          reserved--;
          const claimed: ClaimedDelivery = {
            id,
            run_id: run.id,
            organization_id: delivery.organizationId,
            node_id: delivery.nodeId,
            url: delivery.url,
            method: delivery.method,
            headers: delivery.headers,
            timeout_ms: delivery.timeoutMs,
            body: delivery.body,
            attempts: 1,
            last_attempt: delivery.retries + 1,
            trace_parent: run.trace_parent,
            signing_secrets: leased.signingSecrets,
            more: false,
          };
          const attempt = attemptInSpan(claimed, { deliveryId: id, owner, attempt: 1 })
            .catch(brokeOff)
            .finally(() => {
              firstAttempts.delete(attempt);
              release(1);
            });
          firstAttempts.add(attempt);
        }
        this.cancel();
      },
      cancel() {
        release(reserved);
        reserved = 0;
      },
    };
  };

  return {
    wake: () => wake.notify(),
    reserve,
    async stop() {
      stopping.abort();
      wake.notifyAll();
      await Promise.all([...slots, ...firstAttempts]);
    },
  };
}
