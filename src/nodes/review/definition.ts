import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkReviewSettings } from "./settings.ts";

/** The review node. */
export const reviewNode = {
  name: "review",
  nodeType: NodeType.REVIEW,
  instant: true,
  form: { label: "Review", summary: "Stops the run for a person (or a program) to approve or reject its data." },
  check: checkReviewSettings,
} as const satisfies NodeDefinition<"review">;
