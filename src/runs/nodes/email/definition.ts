import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { emailForm } from "./form.ts";
import { checkEmailSettings } from "./settings.ts";

/** The email node. */
export const emailNode = {
  name: "email",
  nodeType: NodeType.EMAIL,
  form: emailForm,
  check: checkEmailSettings,
} as const satisfies NodeDefinition<"email">;
