import { createHash } from "node:crypto";
import type { DedupeNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import type { Db } from "../../../data/db/schema.ts";
import { findKeyHolder, rememberKey } from "../../../data/repositories/dedupe-keys.ts";
import { evaluateExpression } from "../../sandbox/expressions.ts";
import type { NodeContext, RunData } from "../run-data.ts";

/** A dedupe step's output: the key as text, whether another run of the pipe gave it within the days, and that run. */
export interface DedupeOutput {
  key: string;
  duplicate: boolean;
  /** The run that gave the key first within the days; "" for a new key. */
  firstRunId: string;
}

/** Where a dedupe node records the keys it saw, and whose run asks. */
export interface DedupeRun {
  db: Db;
  pipeId: string;
  runId: string;
  now: Date;
  /** A run of a pipe in test mode: the key is looked up, not recorded, so trying a pipe never makes a later document a duplicate. */
  testMode: boolean;
}

/**
 * The key of the run data by the node's expression, as JSON text (a string as itself), checked
 * against the keys this pipe's runs gave within the node's days; a new key is remembered for this
 * run, so a second attempt of the same run finds it its own (in test mode it is only looked up). A
 * key of null or "" is never a duplicate.
 */
export async function executeDedupe(node: DedupeNode, runData: RunData, context: NodeContext, run: DedupeRun, path = "dedupe"): Promise<DedupeOutput> {
  const value = await evaluateExpression(node.key, `${path}.key`, runData, context);
  const key = value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  if (key === "") return { key, duplicate: false, firstRunId: "" };
  const keyHash = createHash("sha256").update(key).digest("hex");
  const since = new Date(run.now.getTime() - node.withinDays * 86_400_000);
  const firstRunId = run.testMode
    ? ((await findKeyHolder(run.db, { pipeId: run.pipeId, keyHash, since })) ?? run.runId)
    : await rememberKey(run.db, { pipeId: run.pipeId, keyHash, runId: run.runId, now: run.now, since });
  return { key, duplicate: firstRunId !== run.runId, firstRunId: firstRunId === run.runId ? "" : firstRunId };
}
