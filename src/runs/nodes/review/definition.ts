import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { reviewForm } from "./form.ts";
import { checkReviewSettings } from "./settings.ts";

/** The review node. */
export const reviewNode = {
  name: "review",
  nodeType: NodeType.REVIEW,
  instant: true,
  form: reviewForm,
  check: checkReviewSettings,
} as const satisfies NodeDefinition<"review">;
