import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { MASKED, previewUrl } from "../../deliveries/preview-url.ts";
import { callbackForm } from "./form.ts";
import { checkCallbackSettings } from "./settings.ts";

/** The callback node. */
export const callbackNode = {
  name: "callback",
  nodeType: NodeType.CALLBACK,
  instant: true,
  form: callbackForm,
  check: checkCallbackSettings,
  // A URL's path and query are masked: chat webhooks carry their token there.
  credentials: { maskUrl: maskedUrl },
} as const satisfies NodeDefinition<"callback">;

function maskedUrl(url: string): string {
  try {
    return previewUrl(url);
  } catch {
    return MASKED;
  }
}
