import { Readable } from "node:stream";
import { newId } from "../../../platform/ids.ts";
import { StepError } from "../../step-error.ts";
import { insertChildRuns, type NewPart } from "../../../data/repositories/child-runs.ts";
import { countPendingRuns } from "../../../data/repositories/runs.ts";
import { AwaitingChildren, type NodeExecutor } from "../node-executor.ts";
import { runInPool } from "../pool-step.ts";
import { nameWithSuffix } from "../../../documents/formats/file-names.ts";
import { maxSplitOutputBytes } from "../../../documents/split/split-plan.ts";

/** A part's file name extension and content type, by the format it shares with its document. */
const PART_FILES = {
  pdf: { extension: "pdf", contentType: "application/pdf" },
  tiff: { extension: "tiff", contentType: "image/tiff" },
} as const;

/** The step code of a split whose parts would take its organization past MAX_QUEUED_RUNS_PER_ORGANIZATION. */
export const TOO_MANY_QUEUED_RUNS = "too_many_queued_runs";

function isSplitFormat(format: string): format is keyof typeof PART_FILES {
  return Object.hasOwn(PART_FILES, format);
}

/**
 * A split cuts the run's PDF or multi-page TIFF into parts in the task pool, stores each part as a
 * document of the run's organization, then makes one child run per part and moves the run to 'awaiting_children',
 * in one transaction (src/data/repositories/child-runs.ts). A worker that dies before that commit leaves
 * only stored parts no file names, which the orphan sweeper removes; the retried split stores the
 * same bytes under the same names.
 */
export const executeSplit: NodeExecutor<"split"> = async (node, _data, { execution, state, signal, step }) => {
  const { file, run } = state;
  const format = file.format;
  if (!isSplitFormat(format)) throw new StepError("format_unsupported", `the split node splits PDF and TIFF documents; this document is ${format}`);
  const { pagesPerPart, ranges, atText } = node.kind.value;
  const local = await execution.store.localCopy({ organizationId: file.organization_id, sha256: file.sha256 });
  let split: Awaited<ReturnType<typeof runInPool<"split">>>;
  try {
    const input = { format, file: { path: local.path, sha256: file.sha256 }, settings: { pagesPerPart, ranges, atText }, maxParts: execution.splitMaxParts };
    split = await runInPool(execution.pool, "split", input, signal);
  } finally {
    await local.release();
  }
  // Checked again here: the pool process runs the untrusted document, and one taken over by it may answer anything.
  if (!Array.isArray(split.parts) || !split.parts.every((part) => part !== null && typeof part === "object" && part.bytes instanceof Uint8Array)) {
    throw new StepError("parse_crashed", "the parse process returned parts that are not documents");
  }
  if (split.parts.length > execution.splitMaxParts) {
    throw new StepError("split_too_many_parts", `the parse process returned ${split.parts.length} parts, past SPLIT_MAX_PARTS (${execution.splitMaxParts})`);
  }
  const total = split.parts.reduce((sum, part) => sum + part.bytes.length, 0);
  if (total > maxSplitOutputBytes(Number(file.size))) {
    throw new StepError("split_too_large", `the parse process returned ${total} bytes of parts, past what a split of this document may make`);
  }
  const { extension, contentType } = PART_FILES[format];
  const stem = file.name.replace(/\.(?:pdf|tiff?)$/i, "");
  const parts: NewPart[] = [];
  const listed: Record<string, unknown>[] = [];
  for (const [index, part] of split.parts.entries()) {
    const staged = await execution.store.stage(Readable.from([Buffer.from(part.bytes)]), Number.MAX_SAFE_INTEGER);
    await execution.store.commit(file.organization_id, staged);
    const runId = newId();
    const shown = { index, label: part.label, firstPage: part.firstPage, lastPage: part.lastPage };
    listed.push({ runId, ...shown });
    parts.push({
      runId,
      file: { name: nameWithSuffix(stem, `-part-${index + 1}.${extension}`), contentType, format, size: BigInt(staged.size), sha256: staged.sha256 },
      index,
      label: part.label,
      stepOutput: { parentRunId: run.id, ...shown },
    });
  }
  // The steps running beside the split end (and are written) before the run waits for its children.
  await state.othersSettled();
  if (state.failure !== undefined) throw new Error("the run failed on another branch: its parts were not made into runs");
  // The parts are runs of the organization like any other: counted with its runs queued or running (this one among them); the
  // parts stored so far are removed by the orphan sweeper.
  const cap = execution.maxQueuedRunsPerOrganization;
  if ((await countPendingRuns(execution.db, file.organization_id, cap + 1)) + split.parts.length > cap) {
    throw new StepError(
      TOO_MANY_QUEUED_RUNS,
      `its ${split.parts.length} parts would take the organization past ${cap} runs queued or running (MAX_QUEUED_RUNS_PER_ORGANIZATION)`,
    );
  }
  const output = { pageCount: split.pageCount, parts: listed };
  const ended = [...state.ended.splice(0), { node: step, result: { output } }];
  const held = await insertChildRuns(execution.db, state.lease, run, ended, state.queued.splice(0), step, parts);
  return new AwaitingChildren(held);
};
