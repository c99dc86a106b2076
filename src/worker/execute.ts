import { CallbackMethod, type CallbackNode, type Node, type Pipeline } from "../../gen/docpipe/v1/pipe_pb.js";
import { deliverCallback } from "../callbacks/deliver.ts";
import { openHeaders } from "../callbacks/callback-headers.ts";
import type { SecretBox } from "../callbacks/secret-box.ts";
import { signatureHeader, SIGNATURE_HEADER } from "../callbacks/signature.ts";
import { chunkStep } from "../chunk/chunk-step.ts";
import { openSigningSecrets } from "../callbacks/signing-secrets.ts";
import type { Db } from "../db/schema.ts";
import { storableValue } from "../db/storable.ts";
import type { ParseOptions, ParseOutput } from "../parse/parse-document.ts";
import { PARSE_STEP_ERROR_CODES, parseInPool } from "../parse/parse-in-pool.ts";
import { parseOptions } from "../parse/parse-options.ts";
import { attemptLabel, type Metrics } from "../observability/metrics.ts";
import { inSpan } from "../observability/tracing.ts";
import { KIND_NAMES } from "../pipes/validate-pipeline.ts";
import type { TaskPool } from "../pool/task-pool.ts";
import { type FileRow, getFile } from "../repositories/files.ts";
import { decodePipeline, findStoredPipeline } from "../repositories/pipes.ts";
import { endStep, recordedSteps, startStep } from "../repositories/run-steps.ts";
import type { ClaimedRun, Lease } from "../repositories/runs.ts";
import { activeSigningSecrets } from "../repositories/signing-secrets.ts";
import type { DocumentStore } from "../storage/document-store.ts";

export interface CallbackSettings {
  allowPrivateNetworks: boolean;
  backoffMs: number;
}

/** What executing a run needs besides the run. */
export interface ExecutionContext {
  db: Db;
  store: DocumentStore;
  callbacks: CallbackSettings;
  /** The box that opens signing secrets (its key is loaded on first use). */
  secretBox: () => Promise<SecretBox>;
  /** Where untrusted work (parsing) runs, within its budgets, apart from the event loop. */
  pool: TaskPool;
  /** Step durations and callback attempts; absent in tests that do not look. */
  metrics?: Pick<Metrics, "stepDuration" | "callbackDeliveries"> | undefined;
}

export type RunOutcome =
  | { status: "completed" }
  /** `reason` is bounded, for metrics: the failing step's error code, or `<node type>_failed`. */
  | { status: "failed"; error: string; reason: string }
  /** The run is no longer ours (cancelled, lease lost) or the worker is stopping; nothing more is written. */
  | { status: "stopped" };

/** What the nodes of one run share: its file and the outputs so far. */
interface RunState {
  run: ClaimedRun;
  file: FileRow;
  /** Outputs of completed data-producing steps (parse), by node id: the callback's `data`. */
  data: Record<string, unknown>;
  /** The first failure, if any; later nodes except callbacks are skipped. */
  failure?: string;
  /** Its bounded code (see RunOutcome). */
  failureReason?: string;
}

/** The node type name steps record, such as "http_trigger". */
function nodeTypeOf(node: Node): string {
  return node.kind.case === undefined ? "unknown" : KIND_NAMES[node.kind.case];
}

/**
 * Executes the pipeline version the run started with, node by node, recording a step for each.
 * Resumable: steps a previous attempt completed are not redone (their outputs are reused), an
 * unfinished one is redone. After a failure the remaining callbacks still run, reporting "Failed",
 * so callers learn of it. Every write is guarded by the lease: once the run is no longer ours
 * (cancelled, or taken over) execution stops between steps without writing anything more.
 */
export async function executeRun(context: ExecutionContext, run: ClaimedRun, lease: Lease, signal: AbortSignal): Promise<RunOutcome> {
  const { db } = context;
  const version = await findStoredPipeline(db, run.pipe_id, run.pipeline_version);
  if (version === undefined)
    return { status: "failed", error: `pipeline version ${run.pipeline_version} of pipe ${run.pipe_id} does not exist`, reason: "pipeline_unavailable" };
  let pipeline: Pipeline;
  try {
    pipeline = decodePipeline(version.pipeline);
  } catch (error) {
    return { status: "failed", error: `pipeline version ${run.pipeline_version} cannot be read: ${(error as Error).message}`, reason: "pipeline_unavailable" };
  }
  const file = await getFile(db, run.file_id);
  const recorded = await recordedSteps(db, run.id);
  const state: RunState = { run, file, data: {} };

  for (const [position, node] of pipeline.nodes.entries()) {
    if (signal.aborted) return { status: "stopped" };
    const nodeType = nodeTypeOf(node);
    const nodeId = node.id === "" ? `${nodeType}-${position}` : node.id;
    const previous = recorded.get(position);
    if (previous?.status === "completed") {
      keepOutput(state, nodeType, nodeId, previous.output);
      continue;
    }
    if (previous?.status === "failed") {
      fail(state, nodeId, nodeType, previous.error);
      continue;
    }
    if (state.failure !== undefined && nodeType !== "callback") continue;
    if (!(await startStep(db, lease, { position, nodeId, nodeType }))) return { status: "stopped" };
    // Measured here, around the step, whether it runs here or in the task pool.
    const started = performance.now();
    let result: { output: unknown } | { error: string };
    try {
      // Made storable here, so the callback's data is exactly what the step stores.
      result = {
        output: storableValue(
          await inSpan(`step ${nodeType}`, { attributes: { "docpipe.node.type": nodeType, "docpipe.node.id": nodeId } }, () =>
            executeNode(context, state, node, signal),
          ),
        ),
      };
    } catch (error) {
      if (signal.aborted) return { status: "stopped" };
      result = { error: (error as Error).message };
    }
    const outcome = "error" in result ? "failed" : "completed";
    context.metrics?.stepDuration.observe({ node_type: nodeType, format: file.format, outcome }, (performance.now() - started) / 1000);
    if (!(await endStep(db, lease, position, result))) return { status: "stopped" };
    if ("error" in result) fail(state, nodeId, nodeType, result.error);
    else keepOutput(state, nodeType, nodeId, result.output);
  }
  return state.failure === undefined ? { status: "completed" } : { status: "failed", error: state.failure, reason: state.failureReason! };
}

/** Codes a step's error may start with (`parse_timeout: ...`); any other failure is counted as `<node type>_failed`. */
const STEP_ERROR_CODES = new Set<string>(PARSE_STEP_ERROR_CODES);

/** Keeps the run's first failure and its bounded reason. */
function fail(state: RunState, nodeId: string, nodeType: string, error: string): void {
  if (state.failure !== undefined) return;
  state.failure = stepFailure(nodeId, nodeType, error);
  const code = /^([a-z_]+):/.exec(error)?.[1];
  state.failureReason = code !== undefined && STEP_ERROR_CODES.has(code) ? code : `${nodeType}_failed`;
}

/** Parses the run's file, read from its own organization's documents only, in the task pool. */
async function parseStoredFile(context: ExecutionContext, file: FileRow, options: ParseOptions, signal: AbortSignal): Promise<ParseOutput> {
  const local = await context.store.localCopy({ organizationId: file.organization_id, sha256: file.sha256 });
  try {
    return await parseInPool(context.pool, file.format, { path: local.path, sha256: file.sha256 }, options, signal);
  } finally {
    await local.release();
  }
}

/** The run's error for a failed step. */
function stepFailure(nodeId: string, nodeType: string, error: string): string {
  return `step ${nodeId} (${nodeType}) failed: ${error}`;
}

function keepOutput(state: RunState, nodeType: string, nodeId: string, output: unknown): void {
  if (nodeType === "parse" || nodeType === "chunk") state.data[nodeId] = output;
}

/** Runs one node; its result is the step output. Throws with a message fit for the step's error. */
async function executeNode(context: ExecutionContext, state: RunState, node: Node, signal: AbortSignal): Promise<unknown> {
  switch (node.kind.case) {
    case "httpTrigger":
      // The edge did the trigger's work; the step shows what it accepted.
      return {
        fileId: state.file.id,
        name: state.file.name,
        contentType: state.file.content_type,
        format: state.file.format,
        size: Number(state.file.size),
        sha256: state.file.sha256,
      };
    case "parse":
      return parseStoredFile(context, state.file, parseOptions(node.kind.value, state.file.content_type), signal);
    case "callback":
      return sendCallback(context, state, node.kind.value, signal);
    case "chunk":
      return chunkStep(node.kind.value, state.data);
    default:
      throw new Error("the node has no type this worker knows");
  }
}

const METHODS: Record<CallbackMethod, "POST" | "PUT" | "PATCH"> = {
  [CallbackMethod.UNSPECIFIED]: "POST",
  [CallbackMethod.POST]: "POST",
  [CallbackMethod.PUT]: "PUT",
  [CallbackMethod.PATCH]: "PATCH",
};

/** The callback payload: what the run produced, or why it failed. */
export function callbackBody(state: Pick<RunState, "run" | "file" | "data" | "failure">, completedAt: Date): string {
  return JSON.stringify({
    runId: state.run.id,
    pipeId: state.run.pipe_id,
    status: state.failure === undefined ? "Completed" : "Failed",
    fileName: state.file.name,
    data: state.data,
    completedAt: completedAt.toISOString(),
    ...(state.failure === undefined ? {} : { error: state.failure }),
  });
}

async function sendCallback(context: ExecutionContext, state: RunState, callback: CallbackNode, signal: AbortSignal): Promise<unknown> {
  const organizationId = state.run.organization_id;
  const box = await context.secretBox();
  const secrets = openSigningSecrets(box, await activeSigningSecrets(context.db, organizationId, new Date()), organizationId);
  if (secrets.length === 0) {
    throw new Error("the organization has no signing secret; create one with SigningSecretService.RotateSigningSecret");
  }
  const result = await deliverCallback({
    url: callback.url,
    method: METHODS[callback.method] ?? "POST",
    headers: openHeaders(callback.headers, box, organizationId),
    body: callbackBody(state, new Date()),
    sign: (body) => ({ [SIGNATURE_HEADER]: signatureHeader(body, secrets, Math.floor(Date.now() / 1000)) }),
    timeoutMs: (callback.timeoutSeconds ?? 30) * 1000,
    retries: callback.retryCount ?? 3,
    backoffMs: context.callbacks.backoffMs,
    allowPrivateNetworks: context.callbacks.allowPrivateNetworks,
    signal,
    onAttempt: (outcome, attempt) => context.metrics?.callbackDeliveries.inc({ outcome, attempt: attemptLabel(attempt) }),
  });
  return { statusCode: result.status, attempts: result.attempts, host: new URL(callback.url).host };
}
