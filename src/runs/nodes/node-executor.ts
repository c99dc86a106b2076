import type { Transporter } from "nodemailer";
import type { Node } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { SecretBox } from "../deliveries/secret-box.ts";
import type { Db } from "../../data/db/schema.ts";
import type { Metrics } from "../../platform/observability/metrics.ts";
import type { NodeKind, NodeOf } from "./definition.ts";
import type { RunData } from "./run-data.ts";
import type { TaskPool } from "../../documents/pool/task-pool.ts";
import type { NewDelivery } from "../../data/repositories/callback-deliveries.ts";
import type { FileRow } from "../../data/repositories/files.ts";
import type { EndedStep, StepNode } from "../../data/repositories/run-steps.ts";
import type { Lease } from "../../data/repositories/held-run.ts";
import type { ClaimedRun } from "../../data/repositories/run-leases.ts";
import type { DocumentStore } from "../../data/storage/document-store.ts";
import type { WorkerLog } from "../../platform/worker-log.ts";

/** What nodes that reach outside mid-run (HTTP request, email) need. */
interface OutboundSettings {
  /** Whether requests may reach private, loopback and reserved addresses (CALLBACK_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  /** Delay before an HTTP request node's first retry. */
  backoffMs: number;
  /** The box that opens sealed header values (its key is loaded on first use). */
  secretBox: () => Promise<SecretBox>;
  /** The SMTP transport of email nodes (SMTP_URL); undefined when none is set. */
  mailer: Pick<Transporter, "sendMail"> | undefined;
  /** The From address of email nodes (SMTP_FROM). */
  mailFrom: string;
  /** Where an email node logs why its message was not sent, for the operator. */
  log: WorkerLog;
}

/** What executing a run needs besides the run. */
export interface ExecutionContext {
  db: Db;
  store: DocumentStore;
  outbound: OutboundSettings;
  /** Where untrusted work (parsing) runs, within its budgets, apart from the event loop. */
  pool: TaskPool;
  /** Most parts a split node may cut one document into (SPLIT_MAX_PARTS). */
  splitMaxParts: number;
  /** Runs one organization may have queued or running (MAX_QUEUED_RUNS_PER_ORGANIZATION); a split past it fails. */
  maxQueuedRunsPerOrganization: number;
  /** Step durations; absent in tests that do not look. */
  metrics?: Pick<Metrics, "stepDuration"> | undefined;
}

/** What the nodes of one run share. */
export interface RunState {
  run: ClaimedRun;
  /** The worker's hold on the run: every write is guarded by it. */
  lease: Lease;
  file: FileRow;
  /** The nodes of the pipeline version the run executes. */
  nodes: readonly Node[];
  /** The ids of the nodes a run may pass through before it reaches the node with this id. */
  upstreamOf: (nodeId: string) => ReadonlySet<string>;
  data: RunData;
  /** Whether the pipe is in test mode: nodes that reach outside record what they would send, and send nothing. */
  testMode: boolean;
  /** The first failure, if any; later nodes except callbacks are skipped. */
  failure?: string;
  /** Its bounded code (a step error code, or `<node type>_failed`), for metrics. */
  failureReason?: string;
  /** Callback deliveries this run has queued (this attempt or an earlier one). */
  deliveries: number;
  /** Deliveries this attempt's callback steps made, not written yet: written with the run's end, or before the next step that does I/O. */
  queued: NewDelivery[];
  /** Steps that ended here and are not written yet (see `instant` in src/runs/nodes/definition.ts). */
  ended: EndedStep[];
  /** Whether this run's split node has made its child runs (they have ended by now): its merge node runs here. */
  split: boolean;
  /**
   * Resolves once no branch of the run but the caller's is executing a node: a split commits the
   * run to its children only then, since a step still running beside it could not be written
   * after, and would be done again when the run resumes.
   */
  othersSettled: () => Promise<void>;
}

/** What a node's executor is given besides its node and the run data. */
export interface StepContext {
  execution: ExecutionContext;
  state: RunState;
  /** The step's position, node id and node type, as it is recorded. */
  step: StepNode;
  /** Aborted when the run is no longer ours or the worker stops. */
  signal: AbortSignal;
  /** Puts a completed step's output in a run data as its kind does (a merge rebuilds its children's run data with it). */
  addOutput: (data: RunData, node: Node, output: unknown) => void;
}

/**
 * The output of a step that stops the run until a decision (a review): the step waits with this
 * output, and the run leaves the worker until RunService.ResolveReview (or the timeout) decides.
 */
export class Waiting {
  readonly output: Record<string, unknown>;

  constructor(output: Record<string, unknown>) {
    this.output = output;
  }
}

/**
 * The output of a split step that made its child runs: the step, the steps before it and the
 * children were written with the run's move to 'awaiting_children' (src/data/repositories/child-runs.ts),
 * so the run leaves the worker. `held` is false when the run was no longer ours and nothing was written.
 */
export class AwaitingChildren {
  readonly held: boolean;

  constructor(held: boolean) {
    this.held = held;
  }
}

/**
 * Executes one node: reads the run data, returns the step's output (stored on the step, and put in
 * the run data under the node's id), a Waiting or an AwaitingChildren. Throws with a message fit for
 * the step's error; a message starting with `<code>: ` whose code is a known step error code is
 * counted by that code.
 */
export type NodeExecutor<K extends NodeKind, Output = unknown> = (
  node: NodeOf<K>,
  data: RunData,
  context: StepContext,
) => Promise<Output | Waiting | AwaitingChildren>;

/**
 * What the worker knows of a node kind: each kind exports one from src/runs/nodes/<kind>/worker.ts, and
 * src/runs/engine/node-workers.ts collects them (apart from the definitions, so that only the worker loads
 * what executes nodes). `Output` is the shape of its step's output, as stored (JSON).
 */
export interface NodeWorker<K extends NodeKind, Output = unknown> {
  readonly execute: NodeExecutor<K, Output>;
  /** Puts its completed step's output in the run data; without it, the output goes in under the node's id (see putOutput). */
  addOutput?(data: RunData, node: NodeOf<K>, output: Output): void;
  /**
   * The nodes its completed step passes on to (undefined: all its successors), noting in the run's
   * state what the step changes there; without it, all.
   */
  passesOn?(output: Output, node: NodeOf<K>, state: RunState): readonly string[] | undefined;
  /** Runs after a step has failed, when every other node is passed by (a callback, which reports the failure). */
  readonly runsAfterFailure?: true;
  /**
   * Runs in the run that split, once its child runs have ended, though nothing passed on to it (a
   * merge); a child run stops before it.
   */
  readonly afterChildren?: true;
}
