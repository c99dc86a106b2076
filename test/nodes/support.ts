import type { NodeContext } from "../../src/runs/nodes/run-data.ts";
import { StepError } from "../../src/runs/step-error.ts";

/** A context for a run of `invoice.pdf`, not in test mode. */
export function nodeContext(overrides: Partial<NodeContext> = {}): NodeContext {
  return {
    document: { name: "invoice.pdf", format: "pdf", contentType: "application/pdf", size: 1000 },
    testMode: false,
    signal: new AbortController().signal,
    organizationId: "org-test",
    ...overrides,
  };
}

/** The StepError `work` throws (or rejects with); fails the test when it succeeds or throws something else. */
export async function stepErrorOf(work: () => unknown): Promise<StepError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof StepError) return error;
    throw error;
  }
  throw new Error("expected a StepError, but the node succeeded");
}
