import type { Pipeline } from "../../../gen/docpipe/v1/pipe_pb.js";
import { definitionOfNode } from "../nodes/registry.ts";
import { ReviewDataError } from "../nodes/review/data-error.ts";
import { StepError } from "../step-error.ts";
import type { SandboxCaller } from "../sandbox/pool.ts";

export { ReviewDataError };

/** What a reviewer decided, as a review step records it. */
export interface ReviewVerdict {
  decision: "approve" | "reject";
  /** Who decided (an email, a program's name, or "timeout"). */
  reviewer: string;
  comment: string;
  decideTime: Date;
  /** With approve: the corrected node outputs by node id; undefined keeps the data. */
  corrected?: Record<string, unknown> | undefined;
}

/** One field a reviewer changed: its JSON path in the run data, before and after. */
interface ReviewChange {
  path: string;
  before: unknown;
  after: unknown;
}

/** A review's record lists at most this many changes; past it, `changesTruncated` says so. */
const MAX_CHANGES = 100;

/**
 * The corrected data with each extract field's text typed as the field is ("3" for a number field
 * is 3, "3 Nov 2026" for a date "2026-11-03"): a reviewer types text, and a later expression, route
 * or JSON Schema reads the field's type. Text that is no value of the type is refused, naming the
 * field; values that are not text (the reviewer sent JSON) and fields of no extract node stay as sent.
 */
export function typedCorrections(pipeline: Pipeline, corrected: Record<string, unknown>): Record<string, unknown> {
  const typed = { ...corrected };
  for (const node of pipeline.nodes) {
    const typedCorrection = definitionOfNode(node)?.typedCorrection;
    if (typedCorrection === undefined || !Object.hasOwn(typed, node.id)) continue;
    typed[node.id] = typedCorrection(node.kind.value!, typed[node.id], node.id);
  }
  return typed;
}

/**
 * The corrected data with each validate node that ran before the review checked again, on the data
 * as corrected: its verdict was given on what the reviewer replaced, and a receiver reading `valid`
 * must get the verdict on what the run goes on with. A validate output the reviewer changed stays
 * as sent; one that cannot be checked now (its budget ran out) stays as it was. A check that fails
 * records `valid: false` with its errors: the person approved, so the run goes on.
 */
export async function revalidatedCorrections(
  pipeline: Pipeline,
  shown: Record<string, unknown>,
  corrected: Record<string, unknown>,
  caller: SandboxCaller,
): Promise<Record<string, unknown>> {
  const revalidated = { ...corrected };
  const data = { ...shown, ...corrected };
  for (const node of pipeline.nodes) {
    const rerun = definitionOfNode(node)?.rerunOnCorrection;
    if (rerun === undefined || !Object.hasOwn(shown, node.id)) continue;
    if (Object.hasOwn(corrected, node.id) && JSON.stringify(corrected[node.id]) !== JSON.stringify(shown[node.id])) continue;
    // The data as the node first read it: without its own verdict.
    const { [node.id]: _verdict, ...input } = data;
    try {
      revalidated[node.id] = await rerun(node.kind.value!, input, caller, node.id);
    } catch (error) {
      if (!(error instanceof StepError)) throw error;
    }
  }
  return revalidated;
}

/**
 * The step a decision ends: approve completes it (the output records the decision, what changed
 * and the corrected data the run continues with), reject fails it with the code review_rejected.
 * `shown` is the run data the waiting step showed; a correction may change node outputs only,
 * never `file`, and only of nodes the data has.
 */
export function reviewStepResult(
  shown: Record<string, unknown>,
  verdict: ReviewVerdict,
): { output: Record<string, unknown> } | { error: string; output: Record<string, unknown> } {
  const record = { decision: verdict.decision, reviewer: verdict.reviewer, decideTime: verdict.decideTime.toISOString(), comment: verdict.comment };
  if (verdict.decision === "reject") return { error: `review_rejected: ${verdict.comment}`, output: record };
  const corrected = verdict.corrected;
  if (corrected === undefined) return { output: { ...record, changes: [] } };
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(corrected)) {
    if (key === "file") {
      if (JSON.stringify(value) !== JSON.stringify(shown.file)) throw new ReviewDataError("data.file", "the file a run was made from cannot be corrected");
      continue;
    }
    if (!Object.hasOwn(shown, key)) throw new ReviewDataError(`data.${key}`, `the run data has no output of a node "${key.slice(0, 100)}"`);
    data[key] = value;
  }
  const changes: ReviewChange[] = [];
  for (const [key, value] of Object.entries(data)) collectChanges(`$.${key}`, shown[key], value, changes);
  return {
    output: {
      ...record,
      changes: changes.slice(0, MAX_CHANGES),
      ...(changes.length > MAX_CHANGES ? { changesTruncated: true } : {}),
      data,
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The leaves that differ between `before` and `after`, by path; stops collecting past the bound. */
function collectChanges(path: string, before: unknown, after: unknown, changes: ReviewChange[]): void {
  if (changes.length > MAX_CHANGES) return;
  if (isObject(before) && isObject(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) collectChanges(`${path}.${key}`, before[key], after[key], changes);
    return;
  }
  if (JSON.stringify(before) !== JSON.stringify(after)) changes.push({ path, before: before ?? null, after: after ?? null });
}

/** What a waiting review step records (see the worker's review node): the data shown and its timeout. */
export interface WaitingReview {
  data?: Record<string, unknown>;
  expireTime?: string;
  timeoutDecision?: "approve" | "reject";
}

/** Whether a waiting review's timeout has passed at `now`. */
export function reviewExpired(waiting: WaitingReview, now: Date): boolean {
  return waiting.expireTime !== undefined && Date.parse(waiting.expireTime) <= now.getTime();
}

/** The step an expired review ends with: its configured decision (reject by default), by the reviewer "timeout". */
export function timedOutReviewResult(waiting: WaitingReview, now: Date): ReturnType<typeof reviewStepResult> {
  return reviewStepResult(waiting.data ?? {}, {
    decision: waiting.timeoutDecision === "approve" ? "approve" : "reject",
    reviewer: "timeout",
    comment: `no decision before ${waiting.expireTime}`,
    decideTime: now,
  });
}
