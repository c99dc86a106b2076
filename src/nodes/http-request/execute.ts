import { openHeaders } from "../../callbacks/callback-headers.ts";
import type { NodeExecutor } from "../../worker/node-executor.ts";
import { nodeContext } from "../node-context.ts";
import { runHttpRequest } from "./http-request.ts";

/** Sends the node's request with the worker's outbound settings, its sealed header values opened. */
export const executeHttpRequest: NodeExecutor<"httpRequest"> = async (node, data, step) => {
  const { execution, state } = step;
  const box = await execution.outbound.secretBox();
  return runHttpRequest(node.kind.value, data, {
    ...nodeContext(step),
    allowPrivateNetworks: execution.outbound.allowPrivateNetworks,
    backoffMs: execution.outbound.backoffMs,
    openHeaders: (headers) => openHeaders(headers, box, state.run.organization_id),
  });
};
