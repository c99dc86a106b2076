import { NodeType } from "../../../gen/docpipe/v1/run_pb.js";
import type { NodeDefinition } from "../definition.ts";
import { executeHttpRequest } from "./execute.ts";
import { checkHttpRequestSettings } from "./settings.ts";

/** The HTTP request node. */
export const httpRequestNode = {
  name: "http_request",
  nodeType: NodeType.HTTP_REQUEST,
  form: { label: "HTTP request", summary: "Calls another system over HTTP mid-pipeline." },
  check: checkHttpRequestSettings,
  execute: executeHttpRequest,
} as const satisfies NodeDefinition<"httpRequest">;
