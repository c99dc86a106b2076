import { LRUCache } from "lru-cache";
import type { Pipeline } from "../../../gen/docpipe/v1/pipe_pb.js";
import type { Db } from "../../data/db/schema.ts";
import { type PipelineGraph, pipelineGraph } from "../pipes/graph.ts";
import { decodePipeline, findPipeTestMode, findStoredPipeline } from "../../data/repositories/pipes.ts";

/** A saved pipeline version, read for execution: its nodes and their graph. */
interface PipelineVersion {
  pipeline: Pipeline;
  graph: PipelineGraph;
}

/** What a run executes: its pipeline version and whether its pipe is in test mode now, or why it cannot. */
export type LoadedPipeline = (PipelineVersion & { testMode: boolean }) | { missing: true } | { unreadable: string };

/**
 * Versions decoded in this process, by pipe and version, up to about this many characters of stored
 * JSON. A saved version never changes (a rewrite at start-up only seals its header values, with the
 * same meaning), so a run of a version seen before reads only its pipe's test mode: not the
 * pipeline's JSON, its decoding and its graph again, which cost a long pipeline more than its steps.
 */
const CACHED_CHARACTERS = 16 * 1024 * 1024;
const versions = new LRUCache<string, PipelineVersion>({ maxSize: CACHED_CHARACTERS });

/** The pipeline version a run executes (decoded once per process), with its pipe's test mode. */
export async function loadPipelineVersion(db: Db, pipeId: string, version: number): Promise<LoadedPipeline> {
  const key = `${pipeId}/${version}`;
  const cached = versions.get(key);
  if (cached !== undefined) {
    const testMode = await findPipeTestMode(db, pipeId);
    return testMode === undefined ? { missing: true } : { ...cached, testMode };
  }
  const stored = await findStoredPipeline(db, pipeId, version);
  if (stored === undefined) return { missing: true };
  let pipeline: Pipeline;
  try {
    pipeline = decodePipeline(stored.pipeline);
  } catch (error) {
    return { unreadable: (error as Error).message };
  }
  const loaded = { pipeline, graph: pipelineGraph(pipeline) };
  versions.set(key, loaded, { size: Math.max(1, JSON.stringify(stored.pipeline).length) });
  return { ...loaded, testMode: stored.test_mode };
}
