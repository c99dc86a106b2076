import type { Kysely, Selectable } from "kysely";
import { CallbackMethod, type CallbackNode, type Node, type Pipeline } from "../../gen/docpipe/v1/pipe_pb.js";
import { deliverCallback } from "../callbacks/deliver.ts";
import type { SecretBox } from "../callbacks/secret-box.ts";
import { signatureHeader, SIGNATURE_HEADER } from "../callbacks/signature.ts";
import { signingSecretValues } from "../callbacks/signing-secrets.ts";
import type { Database, FileTable } from "../db/schema.ts";
import { parseDocument } from "../parse/parse-document.ts";
import { KIND_NAMES } from "../pipes/validate-pipeline.ts";
import { decodePipeline } from "../repositories/pipes.ts";
import type { FileStore } from "../storage/file-store.ts";
import type { ClaimedRun, Lease } from "./claim.ts";
import { readVerifiedFile } from "./read-file.ts";
import { endStep, recordedSteps, startStep } from "./steps.ts";

export interface CallbackSettings {
  allowPrivateNetworks: boolean;
  backoffMs: number;
}

/** What executing a run needs besides the run. */
export interface ExecutionContext {
  db: Kysely<Database>;
  store: FileStore;
  callbacks: CallbackSettings;
  /** The box that opens signing secrets (its key is loaded on first use). */
  secretBox: () => Promise<SecretBox>;
}

export type RunOutcome =
  | { status: "completed" }
  | { status: "failed"; error: string }
  /** The run is no longer ours (cancelled, lease lost) or the worker is stopping; nothing more is written. */
  | { status: "stopped" };

type StoredFile = Selectable<FileTable>;

/** What the nodes of one run share: its file (read once, on first need) and the outputs so far. */
interface RunState {
  run: ClaimedRun;
  file: StoredFile;
  bytes?: Promise<Buffer>;
  /** Outputs of completed data-producing steps (parse), by node id: the callback's `data`. */
  data: Record<string, unknown>;
  /** The first failure, if any; later nodes except callbacks are skipped. */
  failure?: string;
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
  const version = await db
    .selectFrom("pipeline_versions")
    .select("pipeline")
    .where("pipe_id", "=", run.pipe_id)
    .where("version", "=", run.pipeline_version)
    .executeTakeFirst();
  if (version === undefined) return { status: "failed", error: `pipeline version ${run.pipeline_version} of pipe ${run.pipe_id} does not exist` };
  let pipeline: Pipeline;
  try {
    pipeline = decodePipeline(version.pipeline);
  } catch (error) {
    return { status: "failed", error: `pipeline version ${run.pipeline_version} cannot be read: ${(error as Error).message}` };
  }
  const file = await db.selectFrom("files").selectAll().where("id", "=", run.file_id).executeTakeFirstOrThrow();
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
      state.failure ??= stepFailure(nodeId, nodeType, previous.error);
      continue;
    }
    if (state.failure !== undefined && nodeType !== "callback") continue;
    if (!(await startStep(db, lease, { position, nodeId, nodeType }))) return { status: "stopped" };
    let result: { output: unknown } | { error: string };
    try {
      result = { output: await executeNode(context, state, node, signal) };
    } catch (error) {
      if (signal.aborted) return { status: "stopped" };
      result = { error: (error as Error).message };
    }
    if (!(await endStep(db, lease, position, result))) return { status: "stopped" };
    if ("error" in result) state.failure ??= stepFailure(nodeId, nodeType, result.error);
    else keepOutput(state, nodeType, nodeId, result.output);
  }
  return state.failure === undefined ? { status: "completed" } : { status: "failed", error: state.failure };
}

/** The run's error for a failed step. */
function stepFailure(nodeId: string, nodeType: string, error: string): string {
  return `step ${nodeId} (${nodeType}) failed: ${error}`;
}

function keepOutput(state: RunState, nodeType: string, nodeId: string, output: unknown): void {
  if (nodeType === "parse") state.data[nodeId] = output;
}

/** Runs one node; its result is the step output. Throws with a message fit for the step's error. */
async function executeNode(context: ExecutionContext, state: RunState, node: Node, signal: AbortSignal): Promise<unknown> {
  switch (node.kind.case) {
    case "httpTrigger":
      // The edge did the trigger's work; the step shows what it accepted.
      return { fileId: state.file.id, name: state.file.name, contentType: state.file.content_type, format: state.file.format, size: Number(state.file.size), sha256: state.file.sha256 };
    case "parse":
      state.bytes ??= readVerifiedFile(context.store, state.file.sha256);
      return parseDocument(state.file.format, await state.bytes);
    case "callback":
      return sendCallback(context, state, node.kind.value, signal);
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

/** The callback payload (DECISIONS.md): what the run produced, or why it failed. */
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
  const secrets = await signingSecretValues(context.db, await context.secretBox(), state.run.organization_id, new Date());
  if (secrets.length === 0) {
    throw new Error("the organization has no signing secret; create one with SigningSecretService.RotateSigningSecret");
  }
  const result = await deliverCallback({
    url: callback.url,
    method: METHODS[callback.method] ?? "POST",
    headers: callback.headers,
    body: callbackBody(state, new Date()),
    sign: (body) => ({ [SIGNATURE_HEADER]: signatureHeader(body, secrets, Math.floor(Date.now() / 1000)) }),
    timeoutMs: (callback.timeoutSeconds ?? 30) * 1000,
    retries: callback.retryCount ?? 3,
    backoffMs: context.callbacks.backoffMs,
    allowPrivateNetworks: context.callbacks.allowPrivateNetworks,
    signal,
  });
  return { statusCode: result.status, attempts: result.attempts, host: new URL(callback.url).host };
}
