import type { Node } from "../../../../gen/docpipe/v1/pipe_pb.js";
import type { RunStatus } from "../../../data/db/schema.ts";
import { type ChildRun, listChildRuns } from "../../../data/repositories/child-runs.ts";
import type { NodeExecutor, StepContext } from "../node-executor.ts";
import { initialRunData, type RunData } from "../run-data.ts";

/** A child's status as the merge output (and callbacks) spell statuses. */
const STATUS_NAMES: Partial<Record<RunStatus, string>> = { completed: "Completed", failed: "Failed", cancelled: "Cancelled" };

/**
 * A merge gathers the child runs the split before it made, which have all ended by the time it
 * runs: `{"parts": [{"runId", "index", "label", "status", "data"}]}` in part order, each with its
 * run data (and its error when it failed). A failed child is data for the merge, not a failure.
 */
export const executeMerge: NodeExecutor<"merge"> = async (_node, _data, { execution, state, addOutput }) => {
  const nodes = new Map(state.nodes.map((node) => [node.id, node]));
  const children = await listChildRuns(execution.db, state.run.id);
  return {
    parts: children.map((child) => ({
      runId: child.id,
      index: child.part_index,
      label: child.part_label,
      status: STATUS_NAMES[child.status] ?? child.status,
      ...(child.error === "" ? {} : { error: child.error }),
      data: childRunData(child, nodes, addOutput),
    })),
  };
};

/** A child's run data as its own steps made it: its part's file, then each completed step's output. */
function childRunData(child: ChildRun, nodes: ReadonlyMap<string, Node>, addOutput: StepContext["addOutput"]): RunData {
  const data = initialRunData({ name: child.file_name, format: child.file_format, size: Number(child.file_size), sha256: child.file_sha256 });
  for (const step of child.steps) {
    const node = nodes.get(step.node_id);
    if (step.status === "completed" && node !== undefined) addOutput(data, node, step.output);
  }
  return data;
}
