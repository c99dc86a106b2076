import { HttpMethodSchema, type HttpRequestNode } from "../../../../gen/docpipe/v1/pipe_pb.js";
import { compileExpression } from "../../sandbox/expressions.ts";
import { checkRequestSettings } from "../request-settings.ts";
import { requireText, settingsInvalid } from "../settings.ts";

/** The URL expression is set, its expressions compile; headers, retries and timeout; a known method. */
export function checkHttpRequestSettings(request: HttpRequestNode, path: string): void {
  requireText(request.url, `${path}.url`, "a URL expression");
  compileExpression(request.url, `${path}.url`);
  if (request.body !== "") compileExpression(request.body, `${path}.body`);
  checkRequestSettings(request, path);
  if (!HttpMethodSchema.values.some((known) => known.number === request.method))
    throw settingsInvalid(`${path}.method`, "must be GET, POST, PUT, PATCH or DELETE");
}
