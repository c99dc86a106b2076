import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { LRUCache } from "lru-cache";
import { type Pipe, PipelineSchema, PipeSchema, PipeState } from "../../gen/docpipe/v1/pipe_pb.js";
import type { PipeService, ResolveTriggerResponseSchema } from "../../gen/docpipe/v1/pipe_service_pb.js";
import type { PipeState as StoredPipeState } from "../db/schema.ts";
import { requireRunnablePipeline, validatePipeline } from "../pipes/validate-pipeline.ts";
import { findOrganization, requireOrganization } from "../repositories/organizations.ts";
import {
  findPipe, findPipelineVersion, findTriggerOrigins, insertPipe, listPipes, type PipeRecord, resolveTrigger, softDeletePipe, updatePipe,
} from "../repositories/pipes.ts";
import { findWorkspace } from "../repositories/workspaces.ts";
import type { ServiceDeps } from "./deps.ts";
import { invalidArgument, notFound } from "./errors.ts";
import { isUuid, newId } from "./ids.ts";
import { requireName } from "./names.ts";
import { pageSize } from "./pagination.ts";

const MAX_DESCRIPTION_LENGTH = 2000;

/** What the edge turns into 404: every reason a submission cannot reach a pipe looks the same. */
const TRIGGER_NOT_FOUND_MESSAGE = "pipe not found or not active";

const STATE_TO_PROTO: Readonly<Record<StoredPipeState, PipeState>> = {
  active: PipeState.ACTIVE,
  paused: PipeState.PAUSED,
};

const STATE_FILTERS: Readonly<Record<number, StoredPipeState | undefined>> = {
  [PipeState.UNSPECIFIED]: undefined,
  [PipeState.ACTIVE]: "active",
  [PipeState.PAUSED]: "paused",
};

/** A pipe description: free-form, at most 2000 characters (code points). */
function pipeDescription(description: string): string {
  if ([...description].length > MAX_DESCRIPTION_LENGTH) {
    throw invalidArgument("description", `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  return description;
}

/**
 * The X-Workspace-Id style argument: empty means the default workspace (undefined). A malformed id is
 * a client mistake (400 at the edge), unlike an unknown one, which is NotFound.
 */
function workspaceIdArgument(workspaceId: string): string | undefined {
  if (workspaceId === "") return undefined;
  if (!isUuid(workspaceId)) throw invalidArgument("workspace_id", "workspace_id must be a UUID", "workspace_id_invalid");
  return workspaceId;
}

function stateFilter(state: PipeState): StoredPipeState | undefined {
  if (!Object.hasOwn(STATE_FILTERS, state)) throw invalidArgument("state", `state ${state} is not a PipeState`);
  return STATE_FILTERS[state];
}

function toPipe(record: PipeRecord): Pipe {
  return create(PipeSchema, {
    id: record.id,
    organizationId: record.organization_id,
    workspaceId: record.workspace_id,
    name: record.name,
    description: record.description,
    state: STATE_TO_PROTO[record.state],
    pipeline: record.pipeline,
    pipelineVersion: record.pipeline_version,
    createTime: timestampFromDate(record.create_time),
    updateTime: timestampFromDate(record.update_time),
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

/**
 * How long ResolveTrigger reuses a resolved trigger. Changes made through this process clear it at
 * once; other processes see new settings within this time. Pausing and deleting stay exact
 * everywhere: RunService.CreateRun admits a run only for a pipe that is active when it inserts it.
 */
export const TRIGGER_CACHE_TTL_MS = 1000;

export function createPipeService(deps: ServiceDeps): ServiceImpl<typeof PipeService> {
  const { db, config, pageTokens } = deps;
  const limits = { maxSizeMbLimit: config.maxSizeMbLimit, allowPrivateCallbacks: config.callbackAllowPrivateNetworks };
  // Only found triggers are cached, so a pipe activated a moment ago is found at once.
  const triggers = new LRUCache<string, MessageInitShape<typeof ResolveTriggerResponseSchema>>({ max: 10_000, ttl: TRIGGER_CACHE_TTL_MS });
  // Bumped by every change: a lookup that started before a change must not cache what it read.
  let generation = 0;
  function forgetTriggers(): void {
    generation++;
    triggers.clear();
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
    return db.transaction().execute(async (trx) => {
      const pipe = found(await findPipe(trx, ...ids, { lock: true }));
      // Rechecked on every activation: the operator's limits may have shrunk since the pipeline was saved.
      if (state === "active") requireRunnablePipeline(pipe.pipeline, limits);
      const changed = pipe.state === state ? pipe : await updatePipe(trx, pipe, { state }, deps.now());
      forgetTriggers();
      return toPipe(changed);
    });
  }

  return {
    async createPipe(request) {
      const name = requireName("name", request.name);
      const description = pipeDescription(request.description);
      const pipeline = validatePipeline(request.pipeline ?? create(PipelineSchema), limits);
      const workspaceId = await requireWorkspaceId(request.organizationId, workspaceIdArgument(request.workspaceId));
      const pipe = await db.transaction().execute((trx) =>
        insertPipe(trx, {
          id: newId(),
          organization_id: request.organizationId,
          workspace_id: workspaceId,
          name,
          description,
          pipeline,
          now: deps.now(),
        }),
      );
      return { pipe: toPipe(pipe) };
    },

    async getPipe(request) {
      return { pipe: toPipe(found(await findPipe(db, ...pipeIds(request)))) };
    },

    async listPipes(request) {
      const size = pageSize(request.pageSize);
      const state = stateFilter(request.state);
      const workspaceId = workspaceIdArgument(request.workspaceId);
      const query = { list: "pipes", organizationId: request.organizationId, workspaceId, state };
      const afterId = pageTokens.after(request.pageToken, query);
      if (workspaceId === undefined) await requireOrganization(db, request.organizationId);
      else await requireWorkspaceId(request.organizationId, workspaceId);
      const rows = await listPipes(db, { organizationId: request.organizationId, workspaceId, state }, afterId, size + 1);
      const page = pageTokens.page(rows, size, query);
      return { pipes: page.items.map(toPipe), nextPageToken: page.nextPageToken };
    },

    async updatePipe(request) {
      const ids = pipeIds(request);
      const changes = {
        name: request.name === undefined ? undefined : requireName("name", request.name),
        description: request.description === undefined ? undefined : pipeDescription(request.description),
        pipeline: request.pipeline === undefined ? undefined : validatePipeline(request.pipeline, limits),
      };
      const pipe = await db.transaction().execute(async (trx) => {
        const current = found(await findPipe(trx, ...ids, { lock: true }));
        // An active pipe keeps accepting submissions, so it may not be given a pipeline that cannot run.
        if (current.state === "active" && changes.pipeline !== undefined) requireRunnablePipeline(changes.pipeline, limits);
        return updatePipe(trx, current, changes, deps.now());
      });
      forgetTriggers();
      return { pipe: toPipe(pipe) };
    },

    async getPipelineVersion(request) {
      const result = await findPipelineVersion(db, ...pipeIds(request), request.version);
      if (!result.pipeFound) throw notFound("pipe");
      if (result.version === undefined) throw notFound("pipeline_version");
      const version = result.version;
      return {
        pipelineVersion: {
          pipeId: version.pipe_id,
          version: version.version,
          pipeline: version.pipeline,
          createTime: timestampFromDate(version.create_time),
        },
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

    async resolveTrigger(request) {
      const workspaceId = workspaceIdArgument(request.workspaceId);
      // Junk pipe ids (and organization ids, which come from an authenticated key) cost no query.
      if (!isUuid(request.organizationId) || !isUuid(request.pipeId)) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      const cacheKey = `${request.organizationId}/${workspaceId ?? ""}/${request.pipeId}`;
      const cached = triggers.get(cacheKey);
      if (cached !== undefined) return cached;
      const startedAt = generation;
      const resolved = await resolveTrigger(db, request.organizationId, workspaceId, request.pipeId);
      if (resolved === undefined) throw notFound("workspace");
      if (resolved.pipe === undefined) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      const response = {
        pipeId: resolved.pipe.id,
        workspaceId: resolved.workspaceId,
        pipelineVersion: resolved.pipe.pipelineVersion,
        trigger: resolved.pipe.trigger,
      };
      if (startedAt === generation) triggers.set(cacheKey, response);
      return response;
    },

    async getTriggerOrigins(request) {
      const allowedOrigins = isUuid(request.pipeId) ? await findTriggerOrigins(db, request.pipeId) : undefined;
      if (allowedOrigins === undefined) throw notFound("pipe", TRIGGER_NOT_FOUND_MESSAGE);
      return { allowedOrigins };
    },
  };
}
