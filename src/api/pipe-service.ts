import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { type Pipe, type Pipeline, PipelineSchema, type PipelineVersion, PipelineVersionSchema, PipeSchema, PipeState } from "../../gen/docpipe/v1/pipe_pb.js";
import type { PipeService } from "../../gen/docpipe/v1/pipe_service_pb.js";
import { maskCallbackSecrets, openCallbackHeaders, sealCallbackHeaders } from "../runs/pipes/credentials.ts";
import { callerKey, mayChangePipes } from "../platform/auth/caller.ts";
import { lazySecretBox } from "../runs/deliveries/secret-box.ts";
import type { PipeState as StoredPipeState } from "../data/db/schema.ts";
import { inTransaction } from "../data/db/transaction.ts";
import type { PipelineLimits } from "../runs/nodes/definition.ts";
import { compilePipelineSchemas, PipelineError, requireRunnablePipeline, validatePipeline } from "../runs/pipes/validate-pipeline.ts";
import { findOrganization } from "../data/repositories/organizations.ts";
import {
  findPipe,
  findPipelineVersion,
  insertPipe,
  listPipelineVersions,
  listPipes,
  type PipeRecord,
  type PipelineVersionRecord,
  softDeletePipe,
  updatePipe,
} from "../data/repositories/pipes.ts";
import { findWorkspace } from "../data/repositories/workspaces.ts";
import type { ServiceCaches } from "./caches.ts";
import type { ServiceDeps } from "./deps.ts";
import { EnumColumn } from "./enum-columns.ts";
import { invalidArgument, notFound, serviceError } from "./errors.ts";
import { isUuid, newId } from "../platform/ids.ts";
import { requireName } from "./names.ts";
import { requireOrganization } from "./organizations.ts";
import { listPage } from "./pagination.ts";
import { workspaceIdArgument } from "./workspace-id.ts";

const MAX_DESCRIPTION_LENGTH = 2000;

const STATES = new EnumColumn<StoredPipeState, PipeState>("a PipeState", { active: PipeState.ACTIVE, paused: PipeState.PAUSED });

/** A pipe description: free-form, at most 2000 characters (code points). */
function pipeDescription(description: string): string {
  if ([...description].length > MAX_DESCRIPTION_LENGTH) {
    throw invalidArgument("description", `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  return description;
}

/** Ten years: beyond that, "keep everything" (0) says what is meant. */
const MAX_RETENTION_DAYS = 3650;

/** Days a pipe's runs are kept: 0 (for ever) to MAX_RETENTION_DAYS. */
function retentionDays(days: number): number {
  if (days < 0 || days > MAX_RETENTION_DAYS) {
    throw invalidArgument("retention_days", `retention_days must be 0 (keep every run) to ${MAX_RETENTION_DAYS}`);
  }
  return days;
}

/**
 * Runs a pipeline rule; its PipelineError becomes InvalidArgument (invalid_pipeline: it cannot be
 * saved) or FailedPrecondition (pipeline_not_runnable: it cannot accept submissions), naming the field.
 */
function checkedPipeline<T>(rule: () => T): T {
  try {
    return rule();
  } catch (error) {
    throw pipelineServiceError(error);
  }
}

function pipelineServiceError(error: unknown): unknown {
  if (!(error instanceof PipelineError)) return error;
  const code = error.reason === "invalid_pipeline" ? Code.InvalidArgument : Code.FailedPrecondition;
  return serviceError(code, error.reason, error.message, { field: error.field });
}

/** A pipeline as it is saved: valid against today's limits (normalized), its schemas compiled (in a thread). */
async function savablePipeline(pipeline: Pipeline, limits: PipelineLimits): Promise<Pipeline> {
  try {
    const valid = validatePipeline(pipeline, limits);
    await compilePipelineSchemas(valid);
    return valid;
  } catch (error) {
    throw pipelineServiceError(error);
  }
}

function toPipe(record: PipeRecord): Pipe {
  return create(PipeSchema, {
    id: record.id,
    organizationId: record.organization_id,
    workspaceId: record.workspace_id,
    name: record.name,
    description: record.description,
    state: STATES.proto(record.state),
    pipeline: record.pipeline,
    pipelineVersion: record.pipeline_version,
    createTime: timestampFromDate(record.create_time),
    updateTime: timestampFromDate(record.update_time),
    testMode: record.test_mode,
    retentionDays: record.retention_days,
  });
}

/** The ids of a request naming one pipe; ids that are not UUIDs name nothing, so they are NotFound without a query. */
function pipeIds(request: { organizationId: string; pipeId: string }): [string, string] {
  if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe");
  return [request.organizationId, request.pipeId];
}

function found(pipe: PipeRecord | undefined): PipeRecord {
  if (pipe === undefined) throw notFound("pipe");
  return pipe;
}

export function createPipeService(deps: ServiceDeps, caches: ServiceCaches): ServiceImpl<typeof PipeService> {
  const { db, config, pageTokens } = deps;
  const limits = { maxSizeMbLimit: config.maxSizeMbLimit, allowPrivateCallbacks: config.callbackAllowPrivateNetworks };
  const forgetTriggers = () => caches.triggers.clear();
  const secretBox = lazySecretBox(config);

  /** `pipeline` as it is stored: callback header values sealed. */
  async function sealed(pipeline: Pipeline, organizationId: string): Promise<Pipeline> {
    return sealCallbackHeaders(pipeline, await secretBox(), organizationId);
  }

  /** `pipeline`'s header values opened for a caller who may change the pipe; for one who may only read it, those and its URLs' tokens masked. */
  async function readable(pipeline: Pipeline, organizationId: string, context?: HandlerContext): Promise<Pipeline> {
    return context === undefined || mayChangePipes(context.values.get(callerKey), organizationId)
      ? openCallbackHeaders(pipeline, await secretBox(), organizationId)
      : maskCallbackSecrets(pipeline);
  }

  /** The pipe message of a stored pipe, its callback headers opened (masked for a caller reading it, see readable). */
  async function pipeOf(record: PipeRecord, context?: HandlerContext): Promise<Pipe> {
    return toPipe({ ...record, pipeline: await readable(record.pipeline, record.organization_id, context) });
  }

  /** The message of a saved version, its pipeline readable by the caller (see readable). */
  async function versionOf(version: PipelineVersionRecord, organizationId: string, context: HandlerContext): Promise<PipelineVersion> {
    return create(PipelineVersionSchema, {
      pipeId: version.pipe_id,
      version: version.version,
      pipeline: await readable(version.pipeline, organizationId, context),
      createTime: timestampFromDate(version.create_time),
    });
  }

  /** The live workspace a request names, the organization's default one when it names none; NotFound otherwise. */
  async function requireWorkspaceId(organizationId: string, workspaceId: string | undefined): Promise<string> {
    const organization = await findOrganization(db, organizationId);
    if (organization === undefined) throw notFound("organization");
    if (workspaceId === undefined) return organization.default_workspace_id;
    const workspace = await findWorkspace(db, organizationId, workspaceId);
    if (workspace === undefined) throw notFound("workspace");
    return workspace.id;
  }

  /** Moves a pipe to `state` under a row lock; a pipe already there is returned unchanged (idempotent). */
  async function changeState(request: { organizationId: string; pipeId: string }, state: StoredPipeState): Promise<Pipe> {
    const ids = pipeIds(request);
    return inTransaction(db, async (trx) => {
      const pipe = found(await findPipe(trx, ...ids, { lock: true }));
      // Rechecked on every activation: the operator's limits may have shrunk since the pipeline was saved.
      if (state === "active") checkedPipeline(() => requireRunnablePipeline(pipe.pipeline, limits));
      const changed = pipe.state === state ? pipe : await updatePipe(trx, pipe, { state }, deps.now());
      forgetTriggers();
      return pipeOf(changed);
    });
  }

  return {
    async createPipe(request) {
      const name = requireName("name", request.name);
      const description = pipeDescription(request.description);
      const retention = retentionDays(request.retentionDays);
      const pipeline = await sealed(await savablePipeline(request.pipeline ?? create(PipelineSchema), limits), request.organizationId);
      const workspaceId = await requireWorkspaceId(request.organizationId, workspaceIdArgument(request.workspaceId));
      const pipe = await inTransaction(db, (trx) =>
        insertPipe(trx, {
          id: newId(),
          organization_id: request.organizationId,
          workspace_id: workspaceId,
          name,
          description,
          pipeline,
          test_mode: request.testMode,
          retention_days: retention,
          now: deps.now(),
        }),
      );
      return { pipe: await pipeOf(pipe) };
    },

    async getPipe(request, context) {
      return { pipe: await pipeOf(found(await findPipe(db, ...pipeIds(request))), context) };
    },

    async listPipes(request, context) {
      const { organizationId } = request;
      const state = STATES.filter(request.state, "state");
      const workspaceId = workspaceIdArgument(request.workspaceId);
      const page = await listPage(
        pageTokens,
        request,
        { list: "pipes", organizationId, workspaceId, state },
        (afterId, limit) => listPipes(db, { organizationId, workspaceId, state }, afterId, limit),
        async () => {
          if (workspaceId === undefined) await requireOrganization(db, organizationId);
          else await requireWorkspaceId(organizationId, workspaceId);
        },
      );
      return { pipes: await Promise.all(page.items.map((pipe) => pipeOf(pipe, context))), nextPageToken: page.nextPageToken };
    },

    async updatePipe(request) {
      const ids = pipeIds(request);
      const changes = {
        name: request.name === undefined ? undefined : requireName("name", request.name),
        description: request.description === undefined ? undefined : pipeDescription(request.description),
        test_mode: request.testMode,
        retention_days: request.retentionDays === undefined ? undefined : retentionDays(request.retentionDays),
        pipeline: request.pipeline === undefined ? undefined : await sealed(await savablePipeline(request.pipeline!, limits), ids[0]),
      };
      const pipe = await inTransaction(db, async (trx) => {
        const current = found(await findPipe(trx, ...ids, { lock: true }));
        // An active pipe keeps accepting submissions, so it may not be given a pipeline that cannot run.
        if (current.state === "active" && changes.pipeline !== undefined) checkedPipeline(() => requireRunnablePipeline(changes.pipeline!, limits));
        return updatePipe(trx, current, changes, deps.now());
      });
      forgetTriggers();
      return { pipe: await pipeOf(pipe) };
    },

    async getPipelineVersion(request, context) {
      const ids = pipeIds(request);
      const result = await findPipelineVersion(db, ...ids, request.version);
      if (!result.pipeFound) throw notFound("pipe");
      if (result.version === undefined) throw notFound("pipeline_version");
      const version = result.version;
      return { pipelineVersion: await versionOf(version, ids[0], context) };
    },

    async listPipelineVersions(request, context) {
      const ids = pipeIds(request);
      const query = { list: "pipeline_versions", organizationId: ids[0], pipeId: ids[1] };
      // The page token carries the last version returned, as the other lists carry an id.
      const page = await listPage(pageTokens, request, query, async (after, limit) => {
        const versions = await listPipelineVersions(db, ...ids, after === undefined ? undefined : Number(after), limit);
        if (versions === undefined) throw notFound("pipe");
        return versions.map((version) => ({ ...version, id: String(version.version) }));
      });
      return {
        pipelineVersions: await Promise.all(page.items.map((version) => versionOf(version, ids[0], context))),
        nextPageToken: page.nextPageToken,
      };
    },

    async activatePipe(request) {
      return { pipe: await changeState(request, "active") };
    },

    async pausePipe(request) {
      return { pipe: await changeState(request, "paused") };
    },

    async deletePipe(request) {
      if (!(await softDeletePipe(db, ...pipeIds(request), deps.now()))) throw notFound("pipe");
      forgetTriggers();
      return {};
    },
  };
}
