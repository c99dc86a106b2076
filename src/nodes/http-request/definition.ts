import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { checkHttpRequestSettings } from "./settings.ts";

/** The HTTP request node. */
export const httpRequestNode = {
  name: "http_request",
  nodeType: NodeType.HTTP_REQUEST,
  form: { label: "HTTP request", summary: "Calls another system over HTTP mid-pipeline." },
  check: checkHttpRequestSettings,
} as const satisfies NodeDefinition<"httpRequest">;
