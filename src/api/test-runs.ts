import { Code } from "@connectrpc/connect";
import { TEST_RUN_RULE } from "../platform/auth/rpc-permissions.ts";
import { FORMAT_IDS } from "../documents/formats/format-ids.ts";
import { findPipe } from "../data/repositories/pipes.ts";
import { triggerAcceptance } from "../runs/nodes/registry.ts";
import * as runs from "../data/repositories/runs.ts";
import type { Caller } from "../platform/auth/caller.ts";
import { type Authenticator, authorizeCaller, recordChange } from "./callers.ts";
import type { ServiceDeps } from "./deps.ts";
import { notFound, serviceError } from "./errors.ts";
import type { QueuedRunsCap } from "./queued-runs-cap.ts";

/**
 * Test documents one organization may be sending at once, in this process: one more is refused
 * (ResourceExhausted `too_many_test_runs`, retry in a second) rather than queued, so a flood of them
 * holds at most this many uploads and database calls while other organizations are served.
 */
export const TEST_UPLOADS_PER_ORGANIZATION = 2;

/** What a test document is checked against before it is stored: the pipe's trigger's settings. */
interface TestTarget {
  /** Who sends the document: its run is audited under their name. */
  caller: Caller | undefined;
  organizationId: string;
  pipeId: string;
  pipelineVersion: number;
  acceptedFormats: readonly string[];
  maxBytes: number;
}

/**
 * A document sent from the console to a pipe in test mode (the pipe editor's "Test with a
 * document"): nodes that reach outside record what they would send, and nothing leaves. The run is
 * an ordinary run of the pipe's current pipeline version, without an API key.
 */
export interface TestRuns {
  /**
   * Checks the request's credentials as UpdatePipe would (a role with `pipes.write`), then the pipe:
   * NotFound, or FailedPrecondition `pipe_not_in_test_mode`. Paused pipes may be tried.
   */
  target(header: Headers, organizationId: string, pipeId: string): Promise<TestTarget>;
  /**
   * Counts an upload for the target's organization until the returned function is called; past
   * TEST_UPLOADS_PER_ORGANIZATION at once, ResourceExhausted `too_many_test_runs`.
   */
  begin(target: TestTarget): () => void;
  /** Queues the run of a stored document, and records it in the audit log (`test_run`, from `address`); returns its id. */
  queue(target: TestTarget, file: runs.NewFile, address: string): Promise<string>;
}

export function createTestRuns(deps: ServiceDeps, authenticate: Authenticator, queuedRunsCap: QueuedRunsCap): TestRuns {
  const uploading = new Map<string, number>();
  return {
    async target(header, organizationId, pipeId) {
      const caller = authorizeCaller(TEST_RUN_RULE, await authenticate(header), { organizationId, pipeId });
      const pipe = await findPipe(deps.db, organizationId, pipeId);
      if (pipe === undefined) throw notFound("pipe");
      if (!pipe.test_mode) {
        throw serviceError(Code.FailedPrecondition, "pipe_not_in_test_mode", "the pipe is not in test mode: turn test mode on to try it with a document");
      }
      // The trigger's formats and size when it has them, else any format up to the operator's limit.
      const settings = triggerAcceptance(pipe.pipeline.nodes[0]);
      const acceptedFormats = settings !== undefined && settings.acceptedFormats.length > 0 ? settings.acceptedFormats : FORMAT_IDS;
      const maxSizeMb = settings !== undefined && settings.maxSizeMb > 0 ? settings.maxSizeMb : deps.config.maxSizeMbLimit;
      return { caller, organizationId, pipeId, pipelineVersion: pipe.pipeline_version, acceptedFormats, maxBytes: maxSizeMb * 1024 * 1024 };
    },

    begin({ organizationId }) {
      const count = uploading.get(organizationId) ?? 0;
      if (count >= TEST_UPLOADS_PER_ORGANIZATION) {
        throw serviceError(
          Code.ResourceExhausted,
          "too_many_test_runs",
          `this organization is already sending ${count} test documents, its most at once; send the next when one is done`,
          { retryAfterSeconds: "1" },
        );
      }
      uploading.set(organizationId, count + 1);
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        const left = (uploading.get(organizationId) ?? 1) - 1;
        if (left === 0) uploading.delete(organizationId);
        else uploading.set(organizationId, left);
      };
    },

    async queue(target, file, address) {
      await queuedRunsCap.check(target.organizationId, 1);
      const [result] = await runs.insertQueuedRuns(deps.db, [
        {
          organizationId: target.organizationId,
          pipeId: target.pipeId,
          pipelineVersion: target.pipelineVersion,
          apiKeyId: null,
          file,
          createTime: deps.now(),
          tryingPipe: true,
        },
      ]);
      if (result?.outcome !== "created") throw notFound("pipe");
      queuedRunsCap.added(target.organizationId, 1);
      deps.runsQueued.queued();
      deps.metrics?.runsCreated.inc();
      if (target.caller !== undefined) {
        await recordChange(deps, target.caller, {
          organizationId: target.organizationId,
          action: "test_run",
          resource: { type: "run", id: result.run.id },
          address,
        });
      }
      return result.run.id;
    },
  };
}
