import { NodeType } from "../../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { MASKED } from "../../deliveries/preview-url.ts";
import { httpRequestForm } from "./form.ts";
import { checkHttpRequestSettings } from "./settings.ts";

/** The HTTP request node. */
export const httpRequestNode = {
  name: "http_request",
  nodeType: NodeType.HTTP_REQUEST,
  form: httpRequestForm,
  check: checkHttpRequestSettings,
  // Its URL is an expression, masked whole.
  credentials: { maskUrl: () => JSON.stringify(MASKED) },
} as const satisfies NodeDefinition<"httpRequest">;
