import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkEmailSettings } from "./settings.ts";

/** The email node. */
export const emailNode = {
  name: "email",
  nodeType: NodeType.EMAIL,
  form: { label: "Email", summary: "Sends the run's result by email." },
  check: checkEmailSettings,
} as const satisfies NodeDefinition<"email">;
